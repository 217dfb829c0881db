import Testing

@testable import APNSTransport

/// `HappyEyeballsSchedule` in virtual time: which address is dialed when, who wins, what is dropped (RFC 8305 §5).
@Suite("Happy Eyeballs schedule")
struct HappyEyeballsScheduleTests {
    typealias Schedule = HappyEyeballsSchedule
    let start = EventLoopInstant(nanoseconds: 1_000_000_000)

    func at(_ seconds: Double) -> EventLoopInstant { start.advanced(bySeconds: seconds) }

    func schedule(_ count: Int) -> Schedule {
        Schedule(addressCount: count, attemptDelay: 0.25, attemptTimeout: 10)
    }

    @Test("the first address at once, the next after a 250 ms head start while the first is pending")
    func headStart() {
        var schedule = schedule(3)
        #expect(schedule.start(now: at(0)) == [.dial(0)])
        #expect(schedule.nextDeadline == at(0.25))
        #expect(schedule.tick(now: at(0.1)).isEmpty, "no second dial before the head start is over")
        #expect(schedule.tick(now: at(0.25)) == [.dial(1)])
        #expect(schedule.pendingCount == 2)
        #expect(schedule.nextDeadline == at(0.5))
        #expect(schedule.tick(now: at(0.5)) == [.dial(2)])
        // Nothing left to dial: the next deadline is the first attempt's timeout.
        #expect(schedule.nextDeadline == at(10))
    }

    @Test("a failed attempt starts the next address at once")
    func failureStartsNext() {
        var schedule = schedule(3)
        _ = schedule.start(now: at(0))
        #expect(schedule.attemptFailed(0, now: at(0.01)) == [.dial(1)])
        #expect(schedule.nextDeadline == at(0.26), "the head start counts from the last dial")
        #expect(schedule.attemptFailed(1, now: at(0.02)) == [.dial(2)])
        #expect(schedule.attemptFailed(2, now: at(0.03)) == [.fail])
        #expect(schedule.isFinished)
        #expect(schedule.nextDeadline == nil)
    }

    @Test("the first to connect wins; earlier pending ones are outrun, later ones cancelled")
    func race() {
        var schedule = schedule(4)
        _ = schedule.start(now: at(0))
        _ = schedule.tick(now: at(0.25))
        _ = schedule.tick(now: at(0.5))
        #expect(schedule.attemptConnected(1) == [.drop(0, .outrun), .drop(2, .cancelled), .succeed(1)])
        #expect(schedule.isFinished)
        #expect(schedule.tick(now: at(0.75)).isEmpty, "address 3 is never dialed")
        #expect(schedule.attemptFailed(0, now: at(1)).isEmpty, "a late report changes nothing")
        #expect(schedule.attemptConnected(2).isEmpty)
    }

    @Test("a black hole first: the next address connects 250 ms later and the black hole is dropped")
    func blackHoleFirst() {
        var schedule = schedule(3)  // 10.9.9.2 (drops SYNs), 127.0.0.2 (refuses), 127.0.0.1 (answers)
        #expect(schedule.start(now: at(0)) == [.dial(0)])
        #expect(schedule.tick(now: at(0.25)) == [.dial(1)])
        #expect(schedule.attemptFailed(1, now: at(0.2501)) == [.dial(2)])
        #expect(schedule.attemptConnected(2) == [.drop(0, .outrun), .succeed(2)])
    }

    @Test("each address has its own timeout; one timing out dials the next at once")
    func perAddressTimeout() {
        var schedule = Schedule(addressCount: 3, attemptDelay: 0.25, attemptTimeout: 1)
        _ = schedule.start(now: at(0))
        _ = schedule.tick(now: at(0.25))
        #expect(schedule.nextDeadline == at(0.5))
        _ = schedule.tick(now: at(0.5))
        #expect(schedule.nextDeadline == at(1))
        #expect(schedule.tick(now: at(1)) == [.drop(0, .timedOut)])
        #expect(schedule.tick(now: at(1.25)) == [.drop(1, .timedOut)])
        #expect(schedule.tick(now: at(1.5)) == [.drop(2, .timedOut), .fail])
        #expect(schedule.isFinished)
    }

    @Test("a timeout with addresses left dials the next without waiting for the head start")
    func timeoutDialsNext() {
        var schedule = Schedule(addressCount: 2, attemptDelay: 5, attemptTimeout: 1)
        _ = schedule.start(now: at(0))
        #expect(schedule.nextDeadline == at(1))
        #expect(schedule.tick(now: at(1)) == [.drop(0, .timedOut), .dial(1)])
    }

    @Test("the pool's defaults: a 250 ms head start (RFC 8305's Connection Attempt Delay), 10 s per address")
    func defaults() {
        let configuration = APNSClientConfiguration(endpoint: .production, authentication: .certificate)
        #expect(configuration.connectAttemptDelay == 0.25)
        #expect(configuration.tls.connectTimeout == 10)
    }

    @Test("no address: the connect fails at once")
    func noAddress() {
        var schedule = schedule(0)
        #expect(schedule.start(now: at(0)) == [.fail])
        #expect(schedule.start(now: at(0)).isEmpty)
    }
}
