import APNSCore
import Testing

@testable import APNSTransport

/// Drives a `ConnectionPoolStateMachine` in virtual time: keeps the timers its actions schedule, fires them when
/// the clock passes them, and records every action. No socket, no event loop.
struct PoolMachineHarness {
    typealias Machine = ConnectionPoolStateMachine
    typealias ID = Machine.ConnectionID

    /// Jitter at its top: every delay is its whole step.
    struct NoJitter: RandomNumberGenerator {
        mutating func next() -> UInt64 { .max }
    }

    var machine: Machine
    var now = 0.0
    var timers: [Machine.Timer: Double] = [:]
    /// Connections opened, in order.
    var opened: [ID] = []
    var actions: [Machine.Action] = []

    /// `connections` slots; `initial` of them (all by default) open at `start()`; `streamsPerConnection` at most
    /// on a connection (no limit by default); room kept for `roomPerRequestInFlight` times what is in flight (1 in
    /// these tests, for plain arithmetic; the pool's default is 8).
    init(
        connections: Int = 1, initial: Int? = nil, streamsPerConnection: Int = .max, roomPerRequestInFlight: Int = 1,
        closeIdleAfter: Double? = nil, stagger: Double = 0.1,
        reconnect: ExponentialBackoff = ExponentialBackoff(base: 0.25, cap: 30, maximumAttempts: 12),
        failureWindow: Double = 30, stopAfterTokensExpiredOnFirstUse: Int = 3
    ) {
        machine = Machine(
            maximumConnections: connections, initialConnections: initial, streamsPerConnection: streamsPerConnection,
            roomPerRequestInFlight: roomPerRequestInFlight, closeIdleAfter: closeIdleAfter, stagger: stagger,
            reconnect: reconnect,
            failureWindow: failureWindow, stopAfterTokensExpiredOnFirstUse: stopAfterTokensExpiredOnFirstUse,
            random: NoJitter())
    }

    /// Records the actions and keeps the timers; returns the actions.
    @discardableResult
    mutating func apply(_ actions: Machine.Actions) -> [Machine.Action] {
        let new = actions.array
        for action in new {
            switch action {
            case .open(let id): opened.append(id)
            case .schedule(let timer, let delay): timers[timer] = now + delay
            case .cancel(let timer): timers[timer] = nil
            default: break
            }
        }
        self.actions += new
        return new
    }

    /// Moves the clock by `seconds`, firing due timers in order; returns their actions.
    @discardableResult
    mutating func advance(_ seconds: Double) -> [Machine.Action] {
        let end = now + seconds
        var fired: [Machine.Action] = []
        while let (timer, at) = timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            now = at
            timers[timer] = nil
            fired += apply(machine.timerFired(timer))
        }
        now = end
        return fired
    }

    var lastOpened: ID? { opened.last }

    /// Submits a request: the connection the machine starts it on, or nil when it refuses it.
    mutating func pick() -> ID? {
        let answer = machine.requestSubmitted().array
        #expect(answer.count == 1, "one answer to a request: \(answer)")
        if case .startRequest(let id) = answer.first { return id }
        return nil
    }

    /// The connection `id` ends before the server ever answered, with a retryable error.
    @discardableResult
    mutating func refused(_ id: ID) -> [Machine.Action] {
        apply(
            machine.connectionClosed(
                id, error: TransportError(.connectionRefused, "connect: refused"), hadAnswer: false, serverSpoke: false)
        )
    }
}

@Suite("connection pool state machine")
struct ConnectionPoolStateMachineTests {
    typealias Load = ConnectionPoolStateMachine.Load

    @Test("connections open a stagger apart; the first at once")
    func staggeredStart() throws {
        var pool = PoolMachineHarness(connections: 3, stagger: 0.1)
        let start = pool.apply(pool.machine.start())
        #expect(
            start == [
                .open(.init(value: 0)), .schedule(.open(slot: 1), after: 0.1), .schedule(.open(slot: 2), after: 0.2),
            ])
        pool.advance(0.2)
        #expect(pool.opened.map(\.value) == [0, 1, 2])
        #expect(pool.machine.freeStreams == 0, "nothing is ready yet")
    }

    @Test("back-off doubles with each connection that ends without an answer; one that answered reopens at once")
    func backoffGrowsAndResets() throws {
        var pool = PoolMachineHarness()
        pool.apply(pool.machine.start())
        var delays: [Double] = []
        for _ in 0..<4 {
            let actions = pool.refused(try #require(pool.lastOpened))
            delays += actions.compactMap { if case .schedule(.open, let delay) = $0 { delay } else { nil } }
            pool.advance(5)
        }
        #expect(delays == [0.25, 0.5, 1.0, 2.0])
        #expect(pool.machine.slots == [.starting(try #require(pool.lastOpened), attempts: 4)])

        // A connection that answered resets the count, and its slot reopens at once (the server worked).
        let working = try #require(pool.lastOpened)
        pool.apply(pool.machine.connectionReady(working, load: Load(available: 1, inFlight: 0)))
        let afterAnswer = pool.apply(
            pool.machine.connectionClosed(working, error: nil, hadAnswer: true, serverSpoke: true))
        #expect(afterAnswer == [.schedule(.open(slot: 0), after: 0), .reportFreeStreams])
        #expect(pool.machine.slots == [.backingOff(attempts: 0)])
        pool.advance(1)
        // One that was ready but never answered does not reset it.
        let silent = try #require(pool.lastOpened)
        pool.apply(pool.machine.connectionReady(silent, load: Load(available: 1, inFlight: 0)))
        pool.apply(pool.machine.connectionClosed(silent, error: nil, hadAnswer: false, serverSpoke: true))
        #expect(pool.machine.slots == [.backingOff(attempts: 1)])
    }

    @Test(
        "past the failure window with no other connection working, the next connection that fails gives up once, naming the cause"
    )
    func givesUp() throws {
        var pool = PoolMachineHarness(reconnect: ExponentialBackoff(base: 0.25, cap: 30, maximumAttempts: 3))
        pool.apply(pool.machine.start())
        pool.refused(try #require(pool.lastOpened))
        pool.advance(60)
        pool.refused(try #require(pool.lastOpened))
        pool.advance(60)
        let last = pool.refused(try #require(pool.lastOpened))
        #expect(
            last == [
                .reportFailure(
                    .transport(TransportError(.connectionRefused, "connect: refused, 3 connections in a row")))
            ])
        #expect(pool.machine.slots == [.closed])
        #expect(pool.timers.isEmpty)
        #expect(pool.opened.count == 3)
    }

    @Test("failures past the window do not end the pool while another connection answers")
    func keepsTryingWhileAnotherWorks() throws {
        var pool = PoolMachineHarness(
            connections: 2, reconnect: ExponentialBackoff(base: 0.25, cap: 1, maximumAttempts: 2))
        pool.apply(pool.machine.start())
        pool.advance(0.1)
        let working = pool.opened[1]
        pool.apply(pool.machine.connectionReady(working, load: Load(available: 10, inFlight: 0)))
        pool.apply(pool.machine.connectionAnswered(working))
        for _ in 0..<5 {
            let actions = pool.refused(try #require(pool.opened.last { $0 != working }))
            #expect(!actions.contains { if case .reportFailure = $0 { true } else { false } })
            pool.advance(10)
        }
        #expect(pool.opened.count == 7)
    }

    @Test("a handshake failure no reconnect can cure ends the pool at once; after the server's SETTINGS it is retried")
    func permanentHandshakeFailure() throws {
        let refused = TransportError(.handshakeRefused, "no TLS version in common")
        var early = PoolMachineHarness()
        early.apply(early.machine.start())
        let actions = early.apply(
            early.machine.connectionClosed(
                try #require(early.lastOpened), error: refused, hadAnswer: false, serverSpoke: false))
        #expect(actions == [.reportFailure(.transport(refused))])

        var late = PoolMachineHarness()
        late.apply(late.machine.start())
        let retried = late.apply(
            late.machine.connectionClosed(
                try #require(late.lastOpened), error: refused, hadAnswer: false, serverSpoke: true))
        #expect(
            retried == [
                .schedule(.failureWindow, after: 30), .schedule(.open(slot: 0), after: 0.25), .reportFreeStreams,
            ])
    }

    @Test("GOAWAY: the connection finishes its requests on the side and its slot reopens at once after an answer")
    func goawayReplacement() throws {
        var pool = PoolMachineHarness()
        pool.apply(pool.machine.start())
        let first = try #require(pool.lastOpened)
        pool.apply(pool.machine.connectionReady(first, load: Load(available: 5, inFlight: 0)))
        #expect(pool.pick() == first)
        pool.apply(pool.machine.requestStartedOrEnded(first, load: Load(available: 4, inFlight: 1)))
        let goaway = pool.apply(pool.machine.connectionStoppedTakingStreams(first, hadAnswer: true, inFlight: 1))
        #expect(goaway == [.schedule(.open(slot: 0), after: 0), .reportFreeStreams])
        #expect(pool.machine.retired == [first: 1])
        #expect(pool.machine.freeStreams == 0)
        #expect(pool.pick() == nil, "a retired connection takes no request")
        pool.advance(0)
        let second = try #require(pool.lastOpened)
        #expect(second != first)
        pool.apply(pool.machine.connectionReady(second, load: Load(available: 5, inFlight: 0)))
        #expect(pool.pick() == second)
        // The retired one ends; nothing reopens for it.
        #expect(
            pool.apply(pool.machine.connectionClosed(first, error: nil, hadAnswer: true, serverSpoke: true)).isEmpty)
        #expect(pool.machine.retired.isEmpty)
        #expect(pool.opened.count == 2)
    }

    @Test("GOAWAYs on connections that never answered back off, then give up")
    func goawayWithoutAnswers() throws {
        var pool = PoolMachineHarness(reconnect: ExponentialBackoff(base: 0.25, cap: 30, maximumAttempts: 2))
        pool.apply(pool.machine.start())
        var results: [[ConnectionPoolStateMachine.Action]] = []
        for _ in 0..<3 {
            let id = try #require(pool.lastOpened)
            pool.apply(pool.machine.connectionReady(id, load: Load(available: 1, inFlight: 0)))
            results.append(pool.apply(pool.machine.connectionStoppedTakingStreams(id, hadAnswer: false, inFlight: 0)))
            pool.advance(60)
        }
        #expect(
            results[0] == [
                .schedule(.failureWindow, after: 30), .schedule(.open(slot: 0), after: 0.25), .reportFreeStreams,
            ])
        // Opened before the window ended: the slot tries again at once; the connection opened after it gives up.
        #expect(results[1] == [.schedule(.open(slot: 0), after: 0), .reportFreeStreams])
        #expect(
            results[2] == [
                .reportFailure(
                    .transport(
                        TransportError(
                            .closedByPeer, "every connection ended without an answer, 3 connections in a row")))
            ])
    }

    @Test(
        "SETTINGS raise and lower a connection's free streams; requests spread until answered, then pack: the last one picked while it has room, else the next"
    )
    func capacityAndChoice() throws {
        var pool = PoolMachineHarness(connections: 3, stagger: 0)
        pool.apply(pool.machine.start())
        let ids = pool.opened
        #expect(ids.count == 3)
        for id in ids { pool.apply(pool.machine.connectionReady(id, load: Load(available: 1, inFlight: 0))) }
        #expect(pool.machine.freeStreams == 3)
        #expect(
            pool.apply(pool.machine.loadChanged(ids[0], load: Load(available: 100, inFlight: 0))) == [
                .reportFreeStreams
            ])
        #expect(pool.machine.freeStreams == 102)
        pool.apply(pool.machine.loadChanged(ids[0], load: Load(available: 10, inFlight: 0)))
        #expect(pool.machine.freeStreams == 12)

        pool.apply(pool.machine.requestStartedOrEnded(ids[0], load: Load(available: 8, inFlight: 2)))
        pool.apply(pool.machine.loadChanged(ids[1], load: Load(available: 10, inFlight: 0)))
        pool.apply(pool.machine.loadChanged(ids[2], load: Load(available: 10, inFlight: 0)))
        // Not answered on yet: a connection without a request goes first, before the one already busy (its first
        // request lets its server raise the limit), in slot order.
        #expect(pool.pick() == ids[1])
        pool.apply(pool.machine.requestStartedOrEnded(ids[1], load: Load(available: 9, inFlight: 1)))
        #expect(pool.pick() == ids[2])
        pool.apply(pool.machine.requestStartedOrEnded(ids[2], load: Load(available: 9, inFlight: 1)))
        // Each with a request: they spread, starting with the last connection readied; a server answering nothing
        // then fails on every connection at once.
        #expect(
            [pool.pick(), pool.pick(), pool.pick()]
                == [ids[2], ids[0], ids[1]])
        // One whose request ended unanswered (timed out) goes first again.
        pool.apply(pool.machine.requestStartedOrEnded(ids[0], load: Load(available: 10, inFlight: 0)))
        #expect(pool.pick() == ids[0])
        pool.apply(pool.machine.requestStartedOrEnded(ids[0], load: Load(available: 8, inFlight: 2)))
        for id in ids { pool.apply(pool.machine.connectionAnswered(id)) }
        // Answered: packed. The one picked is kept while it has room; then the next in slot order with room.
        #expect(pool.pick() == ids[2])
        #expect(pool.pick() == ids[2])
        pool.apply(pool.machine.requestStartedOrEnded(ids[2], load: Load(available: 0, inFlight: 10)))
        #expect(pool.pick() == ids[0], "ids[2] full: the next with room")
        pool.apply(pool.machine.requestStartedOrEnded(ids[0], load: Load(available: 7, inFlight: 3)))
        #expect(pool.pick() == ids[0], "kept while it has room")
        pool.apply(pool.machine.requestStartedOrEnded(ids[2], load: Load(available: 1, inFlight: 9)))
        #expect(pool.pick() == ids[0], "not moved by room elsewhere")
        pool.apply(pool.machine.loadChanged(ids[1], load: Load(available: 0, inFlight: 0)))
        pool.apply(pool.machine.loadChanged(ids[2], load: Load(available: 0, inFlight: 0)))
        #expect(pool.pick() == ids[0], "only one with a free stream")
        #expect(pool.machine.activeConnectionCount == 3)
    }

    @Test("close with requests in flight: idle connections close, busy ones drain, then the pool reports closed")
    func drainsOnClose() throws {
        var pool = PoolMachineHarness(connections: 3, stagger: 1)
        pool.apply(pool.machine.start())
        pool.advance(1)
        let busy = pool.opened[0]
        let idle = pool.opened[1]
        pool.apply(pool.machine.connectionReady(busy, load: Load(available: 8, inFlight: 2)))
        pool.apply(pool.machine.connectionReady(idle, load: Load(available: 10, inFlight: 0)))
        #expect(pool.machine.lifecycle == .running)
        let close = pool.apply(pool.machine.closeRequested(gracePeriod: 5))
        #expect(close == [.cancel(.open(slot: 2)), .drain(busy), .close(idle), .schedule(.closeDeadline, after: 5)])
        #expect(pool.machine.lifecycle == .closing(deadlineScheduled: true))
        #expect(pool.machine.freeStreams == 0)
        #expect(pool.pick() == nil)
        #expect(
            pool.apply(pool.machine.connectionClosed(idle, error: nil, hadAnswer: false, serverSpoke: true)).isEmpty)
        pool.apply(pool.machine.requestStartedOrEnded(busy, load: Load(available: 0, inFlight: 0)))
        let done = pool.apply(pool.machine.connectionClosed(busy, error: nil, hadAnswer: true, serverSpoke: true))
        #expect(done == [.cancel(.closeDeadline), .reportClosed])
        #expect(pool.machine.lifecycle == .closed)
        #expect(
            pool.apply(pool.machine.closeRequested(gracePeriod: 5)).isEmpty, "closed: a second close schedules nothing")
        #expect(pool.timers.isEmpty)
        #expect(pool.advance(10).isEmpty, "nothing after the close")
        #expect(pool.opened.count == 2, "no reconnect while closing")
    }

    @Test("close: when the grace period ends, connections still busy are aborted (their requests end in doubt)")
    func gracePeriodExpires() throws {
        var pool = PoolMachineHarness(connections: 1)
        pool.apply(pool.machine.start())
        let busy = try #require(pool.lastOpened)
        pool.apply(pool.machine.connectionReady(busy, load: Load(available: 8, inFlight: 2)))
        pool.apply(pool.machine.closeRequested(gracePeriod: 2))
        #expect(pool.advance(1.9).isEmpty)
        #expect(pool.advance(0.2) == [.abort(busy)])
        #expect(pool.machine.lifecycle == .closing(deadlineScheduled: false), "the deadline has fired")
        let closed = pool.apply(
            pool.machine.connectionClosed(
                busy, error: TransportError(.shutdown, "closing"), hadAnswer: true, serverSpoke: true))
        #expect(closed == [.reportClosed])
        #expect(pool.apply(pool.machine.closeRequested(gracePeriod: 0)).isEmpty, "reported closed once")
    }

    @Test("close while a connection is still connecting or a retired one drains, with no grace period")
    func closeAtOnce() throws {
        var pool = PoolMachineHarness(connections: 2, stagger: 0)
        pool.apply(pool.machine.start())
        let (connecting, working) = (pool.opened[0], pool.opened[1])
        pool.apply(pool.machine.connectionReady(working, load: Load(available: 1, inFlight: 1)))
        pool.apply(pool.machine.connectionStoppedTakingStreams(working, hadAnswer: true, inFlight: 1))
        let close = pool.apply(pool.machine.closeRequested(gracePeriod: 0))
        #expect(close == [.cancel(.open(slot: 1)), .close(connecting), .abort(working)])
        pool.apply(pool.machine.connectionClosed(connecting, error: nil, hadAnswer: false, serverSpoke: false))
        #expect(
            pool.apply(pool.machine.connectionClosed(working, error: nil, hadAnswer: true, serverSpoke: true)) == [
                .reportClosed
            ])
    }

    @Test(
        "failed connections count over the whole pool: a broken server ends the run once the row has lasted the window")
    func failuresInARowOverThePool() throws {
        var pool = PoolMachineHarness(connections: 3, stagger: 0)
        pool.apply(pool.machine.start())
        let stalled = TransportError(.timeout, "the server completed TLS but sent no HTTP/2 SETTINGS in 5 s")
        var gaveUp: [ConnectionPoolStateMachine.Action] = []
        var failures = 0
        // Each connection fails 5 s after it opens (the settings timeout), in every slot, until the pool gives up.
        func failuresReported(_ actions: [ConnectionPoolStateMachine.Action]) -> [ConnectionPoolStateMachine.Action] {
            actions.filter { if case .reportFailure = $0 { true } else { false } }
        }
        while gaveUp.isEmpty, failures < 100 {
            gaveUp += failuresReported(pool.advance(5))
            if !gaveUp.isEmpty { break }
            for id in pool.opened where pool.machine.slot(of: id) != nil {
                failures += 1
                let actions = pool.apply(
                    pool.machine.connectionClosed(id, error: stalled, hadAnswer: false, serverSpoke: false))
                gaveUp += failuresReported(actions)
                if !gaveUp.isEmpty { break }
            }
        }
        #expect(
            gaveUp == [
                .reportFailure(
                    .transport(
                        TransportError(
                            .timeout,
                            "the server completed TLS but sent no HTTP/2 SETTINGS in 5 s, \(failures) connections in a row"
                        )))
            ])
        #expect(failures >= 12, "gave up after \(failures)")
        #expect(pool.now >= 30 && pool.now < 60, "gave up at \(pool.now) s")
    }

    @Test("an answer anywhere starts the row over; a brief outage shorter than the window is ridden out")
    func answerResetsTheRow() throws {
        var pool = PoolMachineHarness(
            connections: 1, reconnect: ExponentialBackoff(base: 0.25, cap: 1, maximumAttempts: 3))
        pool.apply(pool.machine.start())
        for _ in 0..<5 {
            let actions = pool.refused(try #require(pool.lastOpened))
            #expect(
                !actions.contains { if case .reportFailure = $0 { true } else { false } }, "gave up inside the window")
            pool.advance(1)
        }
        #expect(pool.machine.failuresInARow == 5)
        let back = try #require(pool.lastOpened)
        pool.apply(pool.machine.connectionReady(back, load: Load(available: 1, inFlight: 0)))
        #expect(pool.apply(pool.machine.connectionAnswered(back)) == [.cancel(.failureWindow)])
        #expect(pool.machine.failuresInARow == 0 && pool.timers[.failureWindow] == nil)
    }

    @Test("fresh provider tokens declared expired on first use end the pool at the limit, naming the clock, once")
    func clockProblemGivesUp() {
        var pool = PoolMachineHarness(stopAfterTokensExpiredOnFirstUse: 3)
        pool.apply(pool.machine.start())
        #expect(pool.apply(pool.machine.providerTokenExpired(onFirstUseInARow: 2, clockProblem: "clock")).isEmpty)
        #expect(pool.apply(pool.machine.providerTokenExpired(onFirstUseInARow: 3, clockProblem: nil)).isEmpty)
        #expect(
            pool.apply(pool.machine.providerTokenExpired(onFirstUseInARow: 3, clockProblem: "clock"))
                == [.reportFailure(.transport(TransportError(.providerTokenRejected, "clock")))])
        #expect(pool.apply(pool.machine.providerTokenExpired(onFirstUseInARow: 4, clockProblem: "clock")).isEmpty)
        #expect(pool.pick() == nil, "failed: no request goes out")
    }

    @Test("a request goes to a connection only while the pool runs; otherwise it is refused with the reason")
    func requestSubmittedAnswers() {
        var pool = PoolMachineHarness(connections: 1)
        pool.apply(pool.machine.start())
        #expect(pool.machine.requestSubmitted() == [.refuseRequest("no connection has a free stream")])
        let id = pool.opened[0]
        pool.apply(pool.machine.connectionReady(id, load: Load(available: 2, inFlight: 0)))
        #expect(pool.machine.requestSubmitted() == [.startRequest(on: id)])
        pool.apply(pool.machine.failed(.transport(TransportError(.timeout, "test"))))
        #expect(pool.machine.requestSubmitted() == [.refuseRequest("the client stopped after a fatal error")])
    }
}
