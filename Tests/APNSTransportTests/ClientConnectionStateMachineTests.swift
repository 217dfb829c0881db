import APNSCore
import Testing

@testable import APNSTransport

/// The client connection's lifecycle, request timeouts and PINGs, in virtual time: instants are made up, nothing
/// is sent.
@Suite("client connection state machine")
struct ClientConnectionStateMachineTests {
    typealias Machine = ClientConnectionStateMachine
    /// Settings and stall checks far away: the tests of those set their own.
    let timing = Machine.Timing(
        requestTimeout: 30, pingInterval: 20, pingTimeout: 10, settingsTimeout: 1000, stallTimeout: 1000)

    /// `seconds` after an arbitrary origin.
    func at(_ seconds: Double) -> EventLoopInstant {
        EventLoopInstant(nanoseconds: 1_000_000_000_000).advanced(bySeconds: seconds)
    }

    /// Holds the machine so that `#expect` can call its mutating methods.
    final class Box {
        var machine: Machine
        init(_ machine: Machine) { self.machine = machine }
        /// Runs a mutating call on the machine and returns its result.
        func callAsFunction<T>(_ call: (inout Machine) -> T) -> T { call(&machine) }
    }

    /// An answer: 200.
    let ok = PushOutcome.answered(PushAnswer(status: 200))

    /// The action that aborts with this timeout reason.
    func abort(_ reason: String) -> Machine.Action { .end(.abort(TransportError(.timeout, reason))) }

    /// Starts a request on the machine as the connection does: admitted, then started on `streamID`.
    func start(_ m: Box, tag: UInt64, streamID: Int32, tokenSerial: Int = 0, now: EventLoopInstant) {
        #expect(m { $0.requestSubmitted() } == [.startRequest])
        #expect(m { $0.requestStarted(tag: tag, streamID: streamID, tokenSerial: tokenSerial, now: now) }.isEmpty)
    }

    /// A machine whose handshake completed at 0 and whose server sent its SETTINGS.
    func readyMachine() -> Machine {
        var machine = Machine(timing: timing, now: at(0))
        _ = machine.handshakeCompleted(now: at(0))
        _ = machine.settingsReceived()
        return machine
    }

    @Test("connecting, awaiting the server's SETTINGS, ready, draining, closed: each event returns what to do")
    func lifecycle() {
        let m = Box(Machine(timing: timing, now: at(0)))
        #expect(m.machine.state == .connecting && !m.machine.takesRequests)
        #expect(m { $0.tick(now: at(100)) }.isEmpty, "no PING before HTTP/2 is up")
        #expect(m { $0.settingsReceived() }.isEmpty, "no SETTINGS before HTTP/2 is up")
        #expect(m { $0.handshakeCompleted(now: at(1)) } == [.announceReady])
        #expect(m { $0.handshakeCompleted(now: at(1)) }.isEmpty, "once")
        #expect(m.machine.state == .awaitingSettings(.init(handshakeCompletedAt: at(1))))
        #expect(m.machine.takesRequests && !m.machine.serverSigns.spoke)
        #expect(m { $0.settingsReceived() } == [.reportLoad])
        #expect(
            m.machine.state == .ready(.init(handshakeCompletedAt: at(1), server: .sentSettings))
                && m.machine.serverSigns.spoke)
        start(m, tag: 7, streamID: 1, tokenSerial: 3, now: at(2))
        #expect(m { $0.drain(.goaway) } == [.reportDraining(hadAnswer: false, inFlight: 1)])
        #expect(m { $0.drain(.goaway) }.isEmpty, "once")
        #expect(!m.machine.takesRequests)
        #expect(m { $0.sessionProgressed(sessionError: nil, sessionClosed: false) }.isEmpty, "a request is open")
        #expect(
            m { $0.requestEnded(tag: 7, outcome: ok, now: at(0)) }
                == [.reportEnd(tag: 7, outcome: ok, tokenSerial: 3, firstAnswer: true)])
        #expect(m { $0.requestEnded(tag: 7, outcome: ok, now: at(0)) }.isEmpty, "reported once")
        #expect(m.machine.serverSigns.answered && m.machine.serverSigns.spoke)
        #expect(m { $0.sessionProgressed(sessionError: nil, sessionClosed: false) } == [.end(.close)], "drained")
        #expect(m.machine.state == .ending(.close, .answered) && !m.machine.takesRequests)
        #expect(m { $0.end(.close) }.isEmpty, "once")
        #expect(m { $0.requestSubmitted() } == [.refuseRequest], "ending: no new request")
        #expect(m { $0.teardownFinished() } == [.reportClosed(error: nil, server: .answered)])
        #expect(m.machine.state == .closed(.answered))
        #expect(m { $0.teardownFinished() }.isEmpty, "reported once")
        #expect(m { $0.end(.close) }.isEmpty, "closed")
    }

    @Test("a second answer is not the first; a connection still connecting closes when drained")
    func firstAnswerAndEarlyDrain() {
        let m = Box(readyMachine())
        start(m, tag: 1, streamID: 1, tokenSerial: 0, now: at(1))
        start(m, tag: 2, streamID: 3, tokenSerial: 0, now: at(1))
        let failed = PushOutcome.failed(.refusedStream)
        #expect(
            m { $0.requestEnded(tag: 1, outcome: failed, now: at(2)) }
                == [.reportEnd(tag: 1, outcome: failed, tokenSerial: 0, firstAnswer: false)], "a failure proves nothing"
        )
        #expect(!m.machine.serverSigns.answered)
        #expect(
            m { $0.requestEnded(tag: 2, outcome: ok, now: at(2)) }
                == [.reportEnd(tag: 2, outcome: ok, tokenSerial: 0, firstAnswer: true)])
        start(m, tag: 3, streamID: 5, tokenSerial: 0, now: at(3))
        #expect(
            m { $0.requestEnded(tag: 3, outcome: ok, now: at(3)) }
                == [.reportEnd(tag: 3, outcome: ok, tokenSerial: 0, firstAnswer: false)])
        #expect(
            m { $0.drain(.streamIDsUsedUp) } == [.reportDraining(hadAnswer: true, inFlight: 0), .end(.close)],
            "nothing open: it closes itself, no call back into it")

        let connecting = Box(Machine(timing: timing, now: at(0)))
        #expect(connecting { $0.drain(.poolClosing) } == [.end(.close)])
        #expect(connecting.machine.state == .ending(.close, .silent))
        #expect(connecting { $0.handshakeCompleted(now: at(1)) }.isEmpty, "ended")

        let closing = Box(readyMachine())
        start(closing, tag: 1, streamID: 1, tokenSerial: 0, now: at(1))
        #expect(closing { $0.drain(.poolClosing) }.isEmpty, "the pool knows; a request is open")
        #expect(closing { $0.sessionProgressed(sessionError: nil, sessionClosed: true) } == [.end(.close)])
        #expect(
            closing { $0.teardownFinished() } == [
                .reportEnd(
                    tag: 1, outcome: .failed(.answerLost("connection closed")), tokenSerial: 0, firstAnswer: false),
                .reportClosed(error: nil, server: .sentSettings),
            ], "the session did not report it: in doubt, then the close")
    }

    @Test(
        "a request unanswered past the timeout is cancelled alone, oldest first; the connection waits for a sign of life"
    )
    func requestTimeout() {
        let m = Box(readyMachine())
        start(m, tag: 1, streamID: 1, tokenSerial: 0, now: at(1))
        start(m, tag: 2, streamID: 3, tokenSerial: 0, now: at(5))
        start(m, tag: 3, streamID: 5, tokenSerial: 0, now: at(6))
        _ = m.machine.requestEnded(tag: 2, outcome: ok, now: at(0))
        #expect(m { $0.received(now: at(15)) }.isEmpty)
        #expect(m { $0.tick(now: at(31)) }.isEmpty, "exactly at the timeout is not past it")
        #expect(
            m { $0.tick(now: at(31.5)) } == [
                .cancelRequest(tag: 1, streamID: 1, tokenSerial: 0), .sendPing(1), .suspend,
            ])
        #expect(!m.machine.takesRequests)
        #expect(m { $0.received(now: at(32)) } == [.reportLoad], "the first bytes end the suspension")
        #expect(m.machine.takesRequests)
        _ = m { $0.pingAcknowledged() }
        // Tag 2 was answered: only tag 3 is overdue next; a PING goes out again with it.
        #expect(
            m { $0.tick(now: at(36.5)) } == [
                .cancelRequest(tag: 3, streamID: 5, tokenSerial: 0), .sendPing(2), .suspend,
            ])
        #expect(m.machine.openRequests.isEmpty)
    }

    @Test("a draining connection whose last request times out closes")
    func drainedByTimeout() {
        let m = Box(readyMachine())
        start(m, tag: 1, streamID: 1, tokenSerial: 0, now: at(1))
        _ = m.machine.drain(.poolClosing)
        #expect(
            m { $0.tick(now: at(40)) } == [
                .cancelRequest(tag: 1, streamID: 1, tokenSerial: 0), .sendPing(1), .suspend, .end(.close),
            ])
    }

    @Test("a PING after the interval of silence; acknowledged, nothing happens; unanswered, the connection is aborted")
    func liveness() {
        let m = Box(readyMachine())
        #expect(m { $0.tick(now: at(20)) }.isEmpty)
        #expect(m { $0.tick(now: at(21)) } == [.sendPing(1)])
        #expect(m { $0.tick(now: at(25)) }.isEmpty, "one PING at a time")
        _ = m { $0.pingAcknowledged() }
        _ = m.machine.received(now: at(25))
        #expect(m { $0.tick(now: at(40)) }.isEmpty)
        #expect(m { $0.tick(now: at(46)) } == [.sendPing(2)])
        #expect(m { $0.tick(now: at(56)) }.isEmpty)
        #expect(m { $0.tick(now: at(56.5)) } == [abort("PING not answered within 10s")])
    }

    @Test("a PING that could not be sent is not waited for")
    func pingNotSent() {
        let m = Box(readyMachine())
        #expect(m { $0.tick(now: at(21)) } == [.sendPing(1)])
        _ = m { $0.pingNotSent() }
        #expect(m.machine.pingSentAt == nil)
        #expect(m { $0.tick(now: at(40)) } == [.sendPing(2)])
    }

    @Test("requests still open when the connection ends are reported once, by tag, then the close with its error")
    func unreported() {
        let m = Box(readyMachine())
        start(m, tag: 9, streamID: 1, tokenSerial: 2, now: at(1))
        start(m, tag: 4, streamID: 3, tokenSerial: 2, now: at(1))
        start(m, tag: 5, streamID: 5, tokenSerial: 2, now: at(1))
        let reset = TransportError(.closedByPeer, "reset")
        #expect(m { $0.end(.transportClosed(reset)) } == [.end(.transportClosed(reset))])
        #expect(m { $0.tick(now: at(100)) }.isEmpty, "ending: no timeouts")
        // The session's own report of a stream during the teardown still comes through, once.
        let lost = PushOutcome.failed(.answerLost("connection closed"))
        #expect(
            m { $0.requestEnded(tag: 5, outcome: lost, now: at(2)) }
                == [.reportEnd(tag: 5, outcome: lost, tokenSerial: 2, firstAnswer: false)])
        #expect(
            m { $0.teardownFinished() } == [
                .reportEnd(tag: 4, outcome: lost, tokenSerial: 2, firstAnswer: false),
                .reportEnd(tag: 9, outcome: lost, tokenSerial: 2, firstAnswer: false),
                .reportClosed(error: reset, server: .sentSettings),
            ])
        #expect(m { $0.teardownFinished() }.isEmpty)
        #expect(m { $0.tick(now: at(100)) }.isEmpty)
        #expect(m { $0.requestEnded(tag: 4, outcome: lost, now: at(3)) }.isEmpty, "reported already")

        // Before the server's SETTINGS nothing can have been processed: not sent.
        let early = Box(Machine(timing: timing, now: at(0)))
        _ = early { $0.handshakeCompleted(now: at(0)) }
        start(early, tag: 1, streamID: 1, now: at(0))
        #expect(early { $0.end(.abort(reset)) } == [.end(.abort(reset))])
        #expect(
            early { $0.teardownFinished() } == [
                .reportEnd(
                    tag: 1, outcome: .failed(.notSent("the connection ended before the server's SETTINGS")),
                    tokenSerial: 0, firstAnswer: false),
                .reportClosed(error: reset, server: .silent),
            ])
    }

    @Test("a request is admitted only while the connection takes requests; a cancel's outcome follows its HEADERS")
    func admissionAndCancelOutcome() {
        let m = Box(Machine(timing: timing, now: at(0)))
        #expect(m { $0.requestSubmitted() } == [.refuseRequest], "connecting")
        _ = m { $0.handshakeCompleted(now: at(0)) }
        #expect(m { $0.requestSubmitted() } == [.startRequest], "HTTP/2 up: the first request may go before SETTINGS")
        _ = m { $0.settingsReceived() }
        start(m, tag: 1, streamID: 1, now: at(1))
        #expect(m { $0.tick(now: at(32)) }.array.first == .cancelRequest(tag: 1, streamID: 1, tokenSerial: 0))
        #expect(m { $0.requestSubmitted() } == [.refuseRequest], "suspended after a timeout")
        #expect(
            m { $0.requestCancelled(tag: 1, tokenSerial: 0, headersSent: true) } == [
                .reportEnd(
                    tag: 1, outcome: .failed(.answerLost("no answer within 30s; stream cancelled")), tokenSerial: 0,
                    firstAnswer: false)
            ])
        #expect(
            m { $0.requestCancelled(tag: 1, tokenSerial: 0, headersSent: false) } == [
                .reportEnd(
                    tag: 1, outcome: .failed(.notSent("no answer within 30s; stream cancelled")), tokenSerial: 0,
                    firstAnswer: false)
            ])
        _ = m { $0.received(now: at(33)) }
        #expect(m { $0.requestSubmitted() } == [.startRequest], "alive again")
        #expect(
            m { $0.sessionProgressed(sessionError: nil, sessionClosed: false, acceptsNewStreams: false) } == [
                .reportDraining(hadAnswer: false, inFlight: 0), .end(.close),
            ], "stream ids used up with nothing open")
    }

    @Test("no SETTINGS within the settings timeout of the handshake ends the connection, naming it")
    func settingsTimeout() {
        let quick = Machine.Timing(
            requestTimeout: 30, pingInterval: 20, pingTimeout: 10, settingsTimeout: 5, stallTimeout: 1000)
        let m = Box(Machine(timing: quick, now: at(0)))
        _ = m { $0.handshakeCompleted(now: at(1)) }
        start(m, tag: 1, streamID: 1, tokenSerial: 0, now: at(1))
        #expect(m { $0.tick(now: at(6)) }.isEmpty, "exactly at the timeout is not past it")
        #expect(m { $0.tick(now: at(6.5)) } == [abort("the server completed TLS but sent no HTTP/2 SETTINGS in 5 s")])
        // A request started a moment before the handshake's own instant (the loop's turn time): before the server
        // spoke, the settings timeout names the cause, never a stall.
        let early = Box(
            Machine(
                timing: Machine.Timing(
                    requestTimeout: 30, pingInterval: 20, pingTimeout: 10, settingsTimeout: 5, stallTimeout: 5),
                now: at(0)))
        _ = early { $0.handshakeCompleted(now: at(1.2)) }
        start(early, tag: 1, streamID: 1, tokenSerial: 0, now: at(1))
        #expect(early { $0.tick(now: at(6.1)) }.isEmpty)
        #expect(
            early { $0.tick(now: at(6.3)) } == [abort("the server completed TLS but sent no HTTP/2 SETTINGS in 5 s")])
        // Told to drain before the server spoke (the pool closing): still a server that never sent its SETTINGS.
        let drained = Box(Machine(timing: quick, now: at(0)))
        _ = drained { $0.handshakeCompleted(now: at(1)) }
        start(drained, tag: 1, streamID: 1, tokenSerial: 0, now: at(2))
        #expect(drained { $0.drain(.poolClosing) }.isEmpty)
        #expect(
            drained { $0.tick(now: at(6.5)) } == [abort("the server completed TLS but sent no HTTP/2 SETTINGS in 5 s")])
        // SETTINGS in time: no abort, ever.
        let n = Box(Machine(timing: quick, now: at(0)))
        _ = n { $0.handshakeCompleted(now: at(1)) }
        _ = n.machine.settingsReceived()
        #expect(n { $0.tick(now: at(100)) } == [.sendPing(1)])
    }

    @Test(
        "requests waiting with no progress for the stall timeout end the connection; an answer or an idle spell resets it"
    )
    func stall() {
        let stalling = Machine.Timing(
            requestTimeout: 30, pingInterval: 20, pingTimeout: 10, settingsTimeout: 5, stallTimeout: 10)
        let m = Box(Machine(timing: stalling, now: at(0)))
        _ = m { $0.handshakeCompleted(now: at(0)) }
        _ = m.machine.settingsReceived()
        // Idle for long: no requests, no stall.
        #expect(m { $0.tick(now: at(15)) } == [])
        start(m, tag: 1, streamID: 1, tokenSerial: 0, now: at(16))
        start(m, tag: 2, streamID: 3, tokenSerial: 0, now: at(17))
        _ = m { $0.received(now: at(24)) }
        #expect(m { $0.tick(now: at(25)) }.isEmpty)
        _ = m { $0.requestEnded(tag: 1, outcome: ok, now: at(25)) }  // progress
        #expect(m { $0.tick(now: at(35)) }.isEmpty, "10 s after the answer is not past it")
        // Bytes arriving are no progress: a server dripping its answers stalls too.
        _ = m { $0.received(now: at(35.2)) }
        #expect(
            m { $0.tick(now: at(35.5)) } == [
                abort("the server answered none of 1 waiting requests (nor took their bodies) in 10 s")
            ])
    }
}
