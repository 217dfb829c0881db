import APNSCore
import Testing

@testable import APNSTransport

/// A server simulated against `ConnectionPoolStateMachine` in virtual time: each connection the pool opens fails
/// `attemptSeconds` after it opened while the server is down, and is ready and answered at once once it is up.
/// No socket, no event loop.
struct FailingServerSimulation {
    var pool: PoolMachineHarness
    let attemptSeconds: Double
    let error: TransportError
    /// When the server comes back; never by default.
    var upFrom = Double.infinity
    /// Connections failing, and when.
    private var failing: [PoolMachineHarness.ID: Double] = [:]
    private var seen = 0
    /// Actions already looked at for a reported failure.
    private var actionsSeen = 0

    init(_ pool: PoolMachineHarness, attemptSeconds: Double, error: TransportError, upFrom: Double = .infinity) {
        self.pool = pool
        self.attemptSeconds = attemptSeconds
        self.error = error
        self.upFrom = upFrom
    }

    /// Runs the pool from its start for at most `seconds` of virtual time; returns when it gave up and the failure
    /// it reported, nil if it did not.
    mutating func run(seconds: Double) -> (at: Double, failure: ConnectionPoolStateMachine.Failure)? {
        pool.apply(pool.machine.start())
        for _ in 0..<20_000 {
            if let failure = reportedFailure() { return (pool.now, failure) }
            for id in pool.opened[seen...] {
                if pool.now < upFrom {
                    failing[id] = pool.now + attemptSeconds
                } else {
                    pool.apply(pool.machine.connectionReady(id, load: .init(available: 10, inFlight: 0)))
                    pool.apply(pool.machine.connectionAnswered(id))
                }
            }
            seen = pool.opened.count
            let nextFailure = failing.min { $0.value < $1.value }
            let nextTimer = pool.timers.values.min() ?? .infinity
            let next = min(nextFailure?.value ?? .infinity, nextTimer)
            guard next <= seconds else { return nil }
            if let (id, at) = nextFailure, at <= nextTimer {
                pool.advance(at - pool.now)
                failing[id] = nil
                pool.apply(pool.machine.connectionClosed(id, error: error, hadAnswer: false, serverSpoke: false))
            } else {
                pool.advance(next - pool.now)
            }
        }
        return nil
    }

    private mutating func reportedFailure() -> ConnectionPoolStateMachine.Failure? {
        defer { actionsSeen = pool.actions.count }
        for action in pool.actions[actionsSeen...] { if case .reportFailure(let failure) = action { return failure } }
        return nil
    }
}

/// The give-up rule of `ConnectionPoolStateMachine` is the same whatever the pool's size: a row of failed
/// connections ends the pool one connection attempt after `failureWindow` (20 s, the configuration's default),
/// and a server back before that is used again.
@Suite("connection pool: the give-up rule, whatever the pool's size")
struct PoolGiveUpRuleTests {
    static let window = 20.0
    /// The README's bound: every broken server ends a run within a minute.
    static let bound = 60.0

    /// The pool as the tool makes it: `--connections`, three opened first (fewer with fewer slots), the default
    /// reconnect back-off and failure window.
    static func pool(connections: Int, initial: Int? = nil) -> PoolMachineHarness {
        PoolMachineHarness(
            connections: connections, initial: initial ?? min(3, connections), roomPerRequestInFlight: 8,
            reconnect: .connections, failureWindow: window)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let connections: Int
        var initial: Int?
        /// How long each failing connection takes to fail: a handshake closed at once, a SETTINGS timeout of 5 s, a
        /// connect timeout of 10 s.
        let attemptSeconds: Double
        var testDescription: String {
            "--connections \(connections)\(initial.map { ", \($0) open first" } ?? ""), each failing after \(attemptSeconds) s"
        }
    }

    static let cases: [Case] =
        [1, 4, 64].flatMap { connections in
            [0.01, 5, 10].map { Case(connections: connections, attemptSeconds: $0) }
        } + [Case(connections: 64, initial: 64, attemptSeconds: 0.01)]

    @Test(
        "a server failing every connection ends the pool within 60 s, past the window, whatever the pool's size",
        arguments: cases)
    func givesUpWithinTheBound(_ test: Case) throws {
        let closed = TransportError(.closedByPeer, "the server closed the connection during the TLS handshake")
        var simulation = FailingServerSimulation(
            Self.pool(connections: test.connections, initial: test.initial),
            attemptSeconds: test.attemptSeconds, error: closed)
        let result = simulation.run(seconds: 600)
        let (at, failure) = try #require(result, "the pool never gave up")
        // The first failure comes one attempt after the start; the verdict within two attempts after the window.
        #expect(at >= Self.window + test.attemptSeconds, "gave up after \(at) s, inside the window")
        #expect(at <= Self.window + 3 * test.attemptSeconds + 0.5, "gave up after \(at) s")
        #expect(at <= Self.bound, "gave up after \(at) s")
        guard case .transport(let error) = failure else {
            Issue.record("\(failure)")
            return
        }
        #expect(error.kind == .closedByPeer)
        #expect(error.detail.hasPrefix("the server closed the connection during the TLS handshake, "), "\(error)")
        #expect(error.detail.hasSuffix(" connections in a row"), "\(error)")
        #expect(simulation.pool.machine.slots.allSatisfy { if case .active = $0 { false } else { true } })
    }

    @Test("one slot and sixty-four give up within the same second or so against a server that closes every handshake")
    func sameVerdictAnySize() throws {
        var times: [Double] = []
        for connections in [1, 64] {
            var simulation = FailingServerSimulation(
                Self.pool(connections: connections), attemptSeconds: 0.01,
                error: TransportError(.closedByPeer, "the server closed the connection"))
            let result = simulation.run(seconds: 600)
            times.append(try #require(result).at)
        }
        #expect(abs(times[0] - times[1]) < 1, "\(times)")
    }

    @Test(
        "a server back before the window's end is used again, one slot or many: the pool goes on",
        arguments: [1, 4, 64], [5.0, 12.0, 19.5])
    func outageRiddenOut(connections: Int, outage: Double) throws {
        var simulation = FailingServerSimulation(
            Self.pool(connections: connections), attemptSeconds: 0.01,
            error: TransportError(.connectionRefused, "connect: refused"), upFrom: outage)
        let gaveUp = simulation.run(seconds: 120)?.at
        #expect(gaveUp == nil, "gave up against a server back after \(outage) s")
        let machine = simulation.pool.machine
        #expect(machine.failuresInARow == 0 && machine.activeConnectionCount > 0)
        #expect(machine.lifecycle == .running)
    }

    @Test(
        "the window's end tries every waiting slot at once: a server back after 19.5 s is used at 20 s, not after the back-off"
    )
    func lastTryAtTheWindowsEnd() throws {
        var simulation = FailingServerSimulation(
            Self.pool(connections: 1), attemptSeconds: 0.01,
            error: TransportError(.connectionRefused, "connect: refused"), upFrom: 19.5)
        _ = simulation.run(seconds: Self.window + 0.5)
        #expect(simulation.pool.machine.activeConnectionCount == 1, "not back at \(simulation.pool.now) s")
    }
}

/// The transport's one list of errors no reconnect can cure (`TransportError.Kind.permanent`) is the pool's:
/// each of them ends the pool, the others are retried.
@Suite("permanent transport errors: one list")
struct PermanentTransportErrorTests {
    @Test(
        "the pool's rule and isRetryable agree on every kind; a proxy's refusal is permanent, a refused connect is not")
    func oneList() {
        let kinds: [TransportError.Kind] = [
            .connectionRefused, .connectFailed, .nameResolutionFailed, .handshakeFailed, .certificateVerifyFailed,
            .hostnameMismatch, .clientCertificateRejected, .pinMismatch, .alpnNotH2, .proxyRefused, .proxyProtocolError,
            .closedByPeer, .connectionReset, .timeout, .tlsFailure, .invalidConfiguration, .systemCallFailed,
            .eventLoopClosed, .http2ProtocolError, .handshakeRefused, .providerTokenRejected, .shutdown,
        ]
        for kind in kinds {
            let error = TransportError(kind, "detail")
            #expect(ConnectionPoolStateMachine.isPermanent(error) == !error.isRetryable, "\(kind)")
            #expect(error.isRetryable == !TransportError.Kind.permanent.contains(kind), "\(kind)")
        }
        #expect(ConnectionPoolStateMachine.isPermanent(TransportError(.proxyRefused, "403")))
        #expect(!ConnectionPoolStateMachine.isPermanent(TransportError(.connectionRefused, "refused")))
        #expect(TransportError.Kind.permanent.count == 11)
    }
}
