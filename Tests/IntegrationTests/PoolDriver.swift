import APNSCore
import APNSCrypto
import APNSMock
import APNSTransport
import Foundation
import Synchronization

/// Drives an `APNSClientPool` on a test-owned event loop: submits notifications while slots are free, resends
/// what the server never processed (as the dispatcher does), and records how every tag ended.
final class PoolDriver: PushTransportDelegate {
    let loop: EventLoop
    var pool: APNSClientPool!
    private var pending: [(tag: UInt64, notification: PushNotification)] = []
    private var inFlight: [UInt64: PushNotification] = [:]
    private(set) var outcomes: [UInt64: PushOutcome] = [:]
    private(set) var completions = 0
    private(set) var resends = 0
    private(set) var failure: (any Error)?
    private(set) var statuses: [Int: Int] = [:]
    private(set) var reasons: [String: Int] = [:]
    private var pumpQueued = false
    /// Requests in flight at most, like the dispatcher's in-flight window (unlimited: every free slot).
    var maximumInFlight = Int.max
    /// Retry `ExpiredProviderToken` answers once per tag (the dispatcher's `afterResigningToken`).
    var retryExpiredToken = false
    private var expiredRetried = Set<UInt64>()

    init(
        configuration: APNSClientConfiguration,
        clock: @escaping ProviderTokenCache.Clock = ProviderTokenCache.systemTime,
        uptime: @escaping ProviderTokenCache.Uptime = ProviderTokenCache.systemUptime
    ) throws {
        loop = try EventLoop()
        pool = try APNSClientPool(configuration: configuration, loop: loop, clock: clock, uptime: uptime)
        pool.delegate = self
    }

    deinit {
        loop.shutdown()  // connections still registered, and their timers, hold the loop
    }

    /// Sends `notifications` and runs the loop until each has a final outcome, the transport failed, or no
    /// outcome arrived for `timeout` seconds (a deadline that a sanitizer's slowdown stretches instead of
    /// failing; at most 600 s in all).
    func run(_ notifications: [PushNotification], timeout: Double = 30) {
        pending = notifications.enumerated().map { (UInt64($0.offset + 1), $0.element) }.reversed()
        let total = notifications.count
        if !started { pool.start() }
        started = true
        pump()
        let limit = Date().addingTimeInterval(600)
        var deadline = Date().addingTimeInterval(timeout)
        var seen = outcomes.count
        while outcomes.count < total, failure == nil, Date() < deadline, Date() < limit {
            _ = loop.runOnce(timeout: 0.05)
            if outcomes.count != seen {
                seen = outcomes.count
                deadline = Date().addingTimeInterval(timeout)
            }
        }
    }

    /// Opens the connections and runs the loop until `count` of them take streams (or `timeout` seconds pass), so a
    /// test about how requests spread does not depend on how fast each handshake is on a loaded machine.
    func start(waitingForReadyConnections count: Int, timeout: Double = 30) {
        pool.start()
        started = true
        let deadline = Date().addingTimeInterval(timeout)
        while pool.readyConnectionCount < count, failure == nil, Date() < deadline { _ = loop.runOnce(timeout: 0.05) }
    }

    private var started = false

    /// Closes the pool and runs the loop until it has.
    func close() {
        var closed = false
        closedHandler = { closed = true }
        pool.close(gracePeriod: 1)
        let deadline = Date().addingTimeInterval(30)  // ends as soon as the pool has closed
        while !closed, Date() < deadline { _ = loop.runOnce(timeout: 0.05) }
    }

    private var closedHandler: (() -> Void)?

    func count(_ status: Int) -> Int { statuses[status, default: 0] }

    private func pump() {
        pumpQueued = false
        var submitted = false
        while pool.freeSlots > 0, inFlight.count < maximumInFlight, let next = pending.popLast() {
            inFlight[next.tag] = next.notification
            pool.submit(next.notification, tag: next.tag)
            submitted = true
        }
        if submitted { pool.flush() }
    }

    private func schedulePump() {
        guard !pumpQueued else { return }
        pumpQueued = true
        loop.executeNextTurn { [weak self] in self?.pump() }
    }

    func transport(completed tag: UInt64, outcome: PushOutcome) {
        completions += 1
        guard let notification = inFlight.removeValue(forKey: tag) else {
            outcomes[tag] = .failed(.answerLost("completed twice"))
            return
        }
        if case .answered(let answer) = outcome {
            let reason = answer.reason
            statuses[answer.status, default: 0] += 1
            if let reason { reasons[reason.rawValue, default: 0] += 1 }
            if retryExpiredToken, reason == .expiredProviderToken, expiredRetried.insert(tag).inserted {
                resends += 1
                pending.append((tag, notification))
                schedulePump()
                return
            }
        }
        if OutcomePolicy.action(for: outcome) == .retry(.immediately) {
            resends += 1
            pending.append((tag, notification))
        } else {
            outcomes[tag] = outcome
        }
        schedulePump()
    }

    func transportHasFreeSlots() { schedulePump() }
    func transportFailed(_ error: any Error) { failure = error }
    func transportDidClose() { closedHandler?() }
}

/// A mock server and the client settings that reach it with a fresh signing key.
struct MockFixture {
    static let topic = "com.example.app"
    let server: MockServer
    let key: ProviderKey
    let signer: ProviderTokenSigner

    init(
        faults: [String] = [], enforcement: MockServer.InitialLimitEnforcement = .onceAcknowledged,
        maxStreams: Int = 1000, tls: MockServerTLS = .generated(), serverKey: ProviderKey? = nil
    ) throws {
        key = try ProviderKey.generate()
        signer = try ProviderTokenSigner(key: key, keyID: "KEYID12345", teamID: "TEAMID1234")
        let known = serverKey ?? key
        let configuration = MockConfiguration(
            keys: [MockProviderKey(keyID: "KEYID12345", teamID: "TEAMID1234", publicKey: known.publicKey)],
            allowedBundleIDs: [Self.topic], maxConcurrentStreams: maxStreams,
            faults: try FaultPlan(parsing: faults))
        server = try MockServer.start(configuration: configuration, tls: tls, initialLimitEnforcement: enforcement)
    }

    func clientConfiguration(connections: Int = 2) -> APNSClientConfiguration {
        var tls = TLSClientConfiguration()
        if let ca = server.caPEM { tls.trustRoots = .pem(ca) }
        var configuration = APNSClientConfiguration(
            endpoint: APNSEndpoint(host: "127.0.0.1", port: server.port),
            authentication: .providerToken(signer, refreshIntervalSeconds: 50 * 60), tls: tls)
        configuration.maximumConnections = connections
        configuration.initialConnections = connections
        configuration.streamsPerConnection = configuration.maximumStreamsPerConnection
        configuration.connectionStagger = 0.01
        configuration.requestTimeout = 60  // generous: sanitizers slow everything down many times
        return configuration
    }

    static func notifications(_ count: Int, suffix: (Int) -> String = { _ in "" }) -> [PushNotification] {
        (0..<count).compactMap { index in
            let tail = suffix(index)
            var hex = String(index, radix: 16)
            hex = String(repeating: "1", count: 64 - hex.count - tail.count) + hex + tail
            guard let token = try? DeviceToken(parsing: hex), let topic = try? Topic(validating: topic) else {
                return nil
            }
            return PushNotification(
                token: token, topic: topic, pushType: .alert, payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        }
    }
}

/// A clock tests can move (epoch seconds), for the provider-token cache.
final class MovableClock: Sendable {
    private let offset = Atomic<Int64>(0)
    init(offsetSeconds: Int64) { offset.store(offsetSeconds, ordering: .relaxed) }
    func set(offsetSeconds: Int64) { offset.store(offsetSeconds, ordering: .relaxed) }
    func now() -> Int64 { Int64(Date().timeIntervalSince1970) + offset.load(ordering: .relaxed) }
}
