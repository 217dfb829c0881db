import APNSCore
import Testing

@testable import APNSTransport

/// The TLS connection's life without a socket or OpenSSL: each OpenSSL result, readiness and call of the owner is
/// fed in by hand, and the actions it returns are checked.
@Suite("TLS connection state machine")
struct TLSConnectionStateMachineTests {
    typealias Machine = TLSConnectionStateMachine
    typealias Transfer = Machine.Transfer

    /// Holds the machine so that `#expect` can call its mutating methods.
    final class Box {
        var machine: Machine
        init(_ machine: Machine) { self.machine = machine }
        /// Runs a mutating call on the machine and returns its result.
        func callAsFunction<T>(_ call: (inout Machine) -> T) -> T { call(&machine) }
    }

    let failure = TransportError(.connectionReset, "reset by peer")

    /// A client whose handshake completed and was reported.
    func establishedClient() -> Box {
        let m = Box(Machine(isServer: false, handshakeTimeout: 10))
        _ = m { $0.resolved() }
        _ = m { $0.dialed() }
        _ = m { $0.handshakeStepped(.transferred(0)) }
        _ = m { $0.handshakeReported() }
        return m
    }

    /// An established server (it remembers no session).
    func establishedServer() -> Box {
        let m = Box(Machine(isServer: true, handshakeTimeout: 10))
        _ = m { $0.attached() }
        _ = m { $0.handshakeStepped(.transferred(0)) }
        _ = m { $0.handshakeReported() }
        return m
    }

    @Test("a client resolves, dials, handshakes (waiting as OpenSSL asks), then writes and reads what came early")
    func clientHandshake() {
        let m = Box(Machine(isServer: false, handshakeTimeout: 10))
        #expect(m.machine.state == .connecting(.resolving))
        #expect(m { $0.readable() } == [], "no socket yet")
        #expect(m { $0.resolved() } == [.dial])
        #expect(m { $0.resolved() } == [], "once")
        #expect(m { $0.tunnelled() } == [], "no proxy")
        #expect(m { $0.dialed() } == [.startTLS(interest: [.read, .write]), .armTimer(seconds: 10)])
        #expect(m.machine.state == .handshaking([.read, .write]), "a client speaks first")
        #expect(m { $0.writable() } == [.stepHandshake])
        #expect(m { $0.handshakeStepped(.wantRead) } == [.setInterest(.read)])
        #expect(m { $0.handshakeStepped(.wantRead) } == [], "the loop already watches for that")
        #expect(m { $0.readable() } == [.stepHandshake])
        #expect(m { $0.handshakeStepped(.wantWrite) } == [.setInterest([.read, .write])])
        #expect(m { $0.writeRequested() } == [.appendOutput], "kept for after the handshake")
        #expect(m { $0.flushRequested() } == [], "not before the handshake")
        #expect(m { $0.handshakeStepped(.transferred(0)) } == [.cancelTimer, .setInterest(.read), .reportHandshake])
        #expect(m.machine.state == .established(Transfer(remembersSession: true)))
        #expect(m { $0.handshakeStepped(.transferred(0)) } == [], "once")
        #expect(m { $0.handshakeReported() } == [.write, .read(rememberSession: true)])
    }

    @Test("a server waits for the ClientHello; a client through a proxy tunnels first")
    func serverAndProxy() {
        let server = Box(Machine(isServer: true, handshakeTimeout: 3))
        #expect(server { $0.attached() } == [.startTLS(interest: .read), .armTimer(seconds: 3)])
        #expect(server { $0.attached() } == [], "once")
        #expect(server { $0.handshakeStepped(.transferred(0)) } == [.cancelTimer, .reportHandshake])
        #expect(server.machine.state == .established(Transfer(remembersSession: false)))
        #expect(server { $0.handshakeReported() } == [.write, .read(rememberSession: false)])

        let proxied = Box(Machine(isServer: false, tunnels: true, handshakeTimeout: 10))
        _ = proxied { $0.resolved() }
        #expect(proxied { $0.dialed() } == [.openTunnel])
        #expect(proxied.machine.state == .connecting(.tunnelling))
        #expect(proxied { $0.tunnelled() } == [.startTLS(interest: [.read, .write]), .armTimer(seconds: 10)])
    }

    @Test("connect, start and handshake failures and the handshake timeout end the connection and are told once")
    func failuresBeforeEstablished() {
        let connecting = Box(Machine(isServer: false, handshakeTimeout: 10))
        #expect(connecting { $0.connectFailed(failure) } == [.tearDown, .reportClosed(failure)])
        #expect(connecting.machine.state == .closed)
        #expect(connecting { $0.connectFailed(failure) } == [], "told once")
        #expect(connecting { $0.resolved() } == [])

        let starting = Box(Machine(isServer: true, handshakeTimeout: 10))
        #expect(starting { $0.startFailed(failure) } == [], "not started yet")
        _ = starting { $0.attached() }
        #expect(starting { $0.startFailed(failure) } == [.tearDown, .reportClosed(failure)])

        let refused = Box(Machine(isServer: true, handshakeTimeout: 10))
        _ = refused { $0.attached() }
        #expect(refused { $0.handshakeStepped(.failed(failure)) } == [.tearDown, .reportClosed(failure)])

        let hungUp = Box(Machine(isServer: true, handshakeTimeout: 10))
        _ = hungUp { $0.attached() }
        #expect(
            hungUp { $0.handshakeStepped(.endOfFile) } == [
                .tearDown, .reportClosed(TransportError(.handshakeFailed, "the peer closed the connection")),
            ])

        let slow = Box(Machine(isServer: false, handshakeTimeout: 2.5))
        _ = slow { $0.resolved() }
        #expect(slow { $0.timerFired() } == [], "no timer runs while connecting")
        _ = slow { $0.dialed() }
        #expect(
            slow { $0.timerFired() } == [
                .tearDown, .reportClosed(TransportError(.timeout, "TLS handshake not complete after 2.5s")),
            ])
        #expect(slow { $0.timerFired() } == [])
    }

    @Test("reads deliver, then go on after the delegate; the session is remembered once; the budget yields a turn")
    func reading() {
        let m = establishedClient()
        #expect(m { $0.readable() } == [.read(rememberSession: true)])
        #expect(m { $0.read(.transferred(100), sessionRemembered: false) } == [.deliver(count: 100)])
        #expect(m { $0.delivered() } == [.read(rememberSession: true)])
        #expect(m { $0.read(.wantRead, sessionRemembered: true) } == [], "waits for readable")
        #expect(m { $0.readable() } == [.read(rememberSession: false)], "remembered already")

        let budget = Machine.readBudget
        #expect(m { $0.read(.transferred(budget / 2), sessionRemembered: false) } == [.deliver(count: budget / 2)])
        #expect(m { $0.delivered() } == [.read(rememberSession: false)])
        #expect(m { $0.read(.transferred(budget / 2), sessionRemembered: false) } == [.deliver(count: budget / 2)])
        #expect(m { $0.delivered() } == [.resumeReadingNextTurn], "the budget is spent")
        #expect(
            m.machine.state == .established(Transfer(read: .resumesNextTurn, readBudget: 0, remembersSession: false)))
        // Readable again before that turn: a fresh budget, and no second turn scheduled.
        #expect(m { $0.readable() } == [.read(rememberSession: false)])
        #expect(m { $0.read(.transferred(budget), sessionRemembered: false) } == [.deliver(count: budget)])
        #expect(m { $0.delivered() } == [], "a read is scheduled already")
        #expect(m { $0.readingResumed() } == [.read(rememberSession: false)])
        #expect(m.machine.state == .established(Transfer(remembersSession: false)))
    }

    @Test("SSL_ERROR_WANT_WRITE during a read: the read waits for writable")
    func readWantsWrite() {
        let m = establishedServer()
        _ = m { $0.readable() }
        #expect(m { $0.read(.wantWrite, sessionRemembered: false) } == [.setInterest([.read, .write])])
        #expect(m.machine.state == .established(Transfer(read: .waitsForWritable, remembersSession: false)))
        #expect(m { $0.writable() } == [.setInterest(.read), .read(rememberSession: false)])
        #expect(m.machine.state == .established(Transfer(remembersSession: false)))
        #expect(m { $0.writable() } == [], "nothing waits for writable")

        // Both directions wait for writable: one wake-up runs both, and writable stays watched for the write.
        _ = m { $0.flushRequested() }
        _ = m { $0.wrote(.wantWrite) }
        #expect(m { $0.read(.wantWrite, sessionRemembered: false) } == [], "writable is watched already")
        #expect(m { $0.writable() } == [.write, .read(rememberSession: false)])
    }

    @Test("SSL_ERROR_WANT_READ during a write: the write goes on when readable, then the drain notice")
    func writeWantsRead() {
        let m = establishedServer()
        #expect(m { $0.flushRequested() } == [.write])
        #expect(m { $0.wrote(.wantRead) } == [], "readable is always watched")
        #expect(m.machine.state == .established(Transfer(write: .waits(for: .readable), remembersSession: false)))
        #expect(m { $0.flushRequested() } == [], "the write waits")
        #expect(m { $0.writable() } == [], "not what it waits for")
        #expect(m { $0.readable() } == [.write, .read(rememberSession: false)])
        #expect(m { $0.wrote(.transferred(0)) } == [.reportDrained])
        #expect(m.machine.state == .established(Transfer(remembersSession: false)))
    }

    @Test("SSL_ERROR_WANT_WRITE during a write: writable is watched until the output has gone, then the notice")
    func writeWantsWrite() {
        let m = establishedServer()
        #expect(m { $0.writeRequested() } == [.appendOutput])
        #expect(m { $0.flushRequested() } == [.write])
        #expect(m { $0.wrote(.transferred(0)) } == [], "no notice for output that never waited")
        #expect(m { $0.flushRequested() } == [.write])
        #expect(m { $0.wrote(.wantWrite) } == [.setInterest([.read, .write])])
        #expect(m { $0.flushRequested() } == [], "the write waits")
        #expect(m { $0.writable() } == [.write])
        #expect(m { $0.wrote(.wantWrite) } == [], "still watched: no flip of the interest")
        #expect(m { $0.writable() } == [.write])
        #expect(m { $0.wrote(.transferred(0)) } == [.setInterest(.read), .reportDrained])
        #expect(m { $0.wrote(.transferred(0)) } == [], "the notice once")
    }

    @Test("a failed write ends the connection, told once and after; every later event does nothing")
    func failedWrite() {
        let m = establishedClient()
        _ = m { $0.flushRequested() }
        #expect(m { $0.wrote(.failed(failure)) } == [.tearDown, .reportClosed(failure)])
        #expect(m.machine.state == .closed)
        #expect(m { $0.wrote(.failed(failure)) } == [], "told once")
        #expect(m { $0.wrote(.transferred(0)) } == [])
        #expect(m { $0.writeRequested() } == [])
        #expect(m { $0.flushRequested() } == [])
        #expect(m { $0.readable() } == [])
        #expect(m { $0.writable() } == [])
        #expect(m { $0.hangup() } == [])
        #expect(m { $0.read(.transferred(5), sessionRemembered: false) } == [])
        #expect(m { $0.delivered() } == [])
        #expect(m { $0.readingResumed() } == [])
        #expect(m { $0.timerFired() } == [])
        #expect(m { $0.handshakeStepped(.transferred(0)) } == [])
        #expect(m { $0.handshakeReported() } == [])
        #expect(m { $0.closeRequested(gracePeriod: 1) } == [])
        #expect(m { $0.abortRequested() } == [])
        #expect(m { $0.connectFailed(failure) } == [])
        #expect(m { $0.dialed() } == [])

        let peerClosed = establishedServer()
        _ = peerClosed { $0.flushRequested() }
        #expect(
            peerClosed { $0.wrote(.endOfFile) } == [
                .tearDown, .reportClosed(TransportError(.closedByPeer, "while writing")),
            ])
    }

    @Test("the peer's close_notify, EOF and errors while established are told; close_notify is answered")
    func peerEnds() {
        let clean = establishedServer()
        #expect(
            clean { $0.read(.closeNotify, sessionRemembered: false) } == [
                .sendCloseNotify, .tearDown, .reportClosed(nil),
            ])
        let eof = establishedServer()
        #expect(
            eof { $0.read(.endOfFile, sessionRemembered: false) } == [
                .tearDown, .reportClosed(TransportError(.closedByPeer, "TCP closed without TLS close_notify")),
            ])
        let broken = establishedServer()
        #expect(broken { $0.read(.failed(failure), sessionRemembered: false) } == [.tearDown, .reportClosed(failure)])
        #expect(broken { $0.read(.failed(failure), sessionRemembered: false) } == [], "once")
    }

    @Test("close: the output, then close_notify; what arrives meanwhile is dropped; nothing is told")
    func gracefulClose() {
        let m = establishedClient()
        #expect(m { $0.closeRequested(gracePeriod: 2) } == [.armTimer(seconds: 2), .write])
        #expect(m.machine.state == .closing(Transfer(remembersSession: true)))
        #expect(m { $0.writeRequested() } == [], "ignored once closing")
        #expect(m { $0.flushRequested() } == [], "the close writes")
        #expect(m { $0.readable() } == [.read(rememberSession: false)], "read to drop, not to remember")
        #expect(m { $0.read(.transferred(10), sessionRemembered: false) } == [.read(rememberSession: false)])
        #expect(m { $0.read(.wantRead, sessionRemembered: false) } == [])
        #expect(m { $0.wrote(.wantWrite) } == [.setInterest([.read, .write])])
        #expect(m { $0.writable() } == [.write])
        #expect(m { $0.wrote(.transferred(0)) } == [.sendCloseNotify, .tearDown], "no drain notice, no report")
        #expect(m.machine.state == .closed)
        #expect(m { $0.timerFired() } == [], "the timer went with the teardown")
    }

    @Test("close: the grace period ends a close whose output cannot go; failures and the peer's end are untold")
    func closeTimerAndUntoldEndings() {
        let stuck = establishedServer()
        _ = stuck { $0.flushRequested() }
        _ = stuck { $0.wrote(.wantWrite) }
        #expect(stuck { $0.closeRequested(gracePeriod: 1) } == [.armTimer(seconds: 1)], "the write waits")
        #expect(stuck { $0.timerFired() } == [.tearDown])
        #expect(stuck { $0.timerFired() } == [])

        let failing = establishedServer()
        _ = failing { $0.closeRequested(gracePeriod: 1) }
        #expect(failing { $0.wrote(.failed(failure)) } == [.tearDown])

        let answered = establishedServer()
        _ = answered { $0.closeRequested(gracePeriod: 1) }
        #expect(answered { $0.read(.closeNotify, sessionRemembered: false) } == [.sendCloseNotify, .tearDown])

        let twice = establishedServer()
        _ = twice { $0.closeRequested(gracePeriod: 1) }
        #expect(twice { $0.closeRequested(gracePeriod: 1) } == [.tearDown], "a second close aborts")
    }

    @Test("close before the handshake completed and abort end at once, untold, once")
    func abortAndEarlyClose() {
        let connecting = Box(Machine(isServer: false, handshakeTimeout: 10))
        #expect(connecting { $0.closeRequested(gracePeriod: 5) } == [.tearDown])
        #expect(connecting { $0.resolved() } == [], "a resolution that lands after is dropped")

        let handshaking = Box(Machine(isServer: true, handshakeTimeout: 10))
        _ = handshaking { $0.attached() }
        #expect(handshaking { $0.closeRequested(gracePeriod: 5) } == [.tearDown])
        #expect(handshaking { $0.handshakeStepped(.transferred(0)) } == [])

        let established = establishedClient()
        _ = established { $0.flushRequested() }
        #expect(established { $0.abortRequested() } == [.tearDown])
        #expect(established { $0.abortRequested() } == [], "once")
        #expect(established { $0.wrote(.failed(failure)) } == [], "the write's end after the abort is not told")

        let dialing = Box(Machine(isServer: false, handshakeTimeout: 10))
        _ = dialing { $0.resolved() }
        #expect(dialing { $0.abortRequested() } == [.tearDown])
        #expect(dialing { $0.dialed() } == [])
        #expect(dialing { $0.connectFailed(failure) } == [], "cancelled: not told")
    }

    @Test("the delegate closes while hearing of the handshake: no read or write follows from the report")
    func closeDuringHandshakeReport() {
        let m = Box(Machine(isServer: true, handshakeTimeout: 10))
        _ = m { $0.attached() }
        #expect(m { $0.handshakeStepped(.transferred(0)) } == [.cancelTimer, .reportHandshake])
        #expect(m { $0.closeRequested(gracePeriod: 5) } == [.armTimer(seconds: 5), .write])
        #expect(m { $0.handshakeReported() } == [])
    }

    @Test("hangup reads to find out how, in each state")
    func hangupInEachState() {
        let connecting = Box(Machine(isServer: false, handshakeTimeout: 10))
        #expect(connecting { $0.hangup() } == [])
        let handshaking = Box(Machine(isServer: true, handshakeTimeout: 10))
        _ = handshaking { $0.attached() }
        #expect(handshaking { $0.hangup() } == [.stepHandshake])
        let established = establishedClient()
        #expect(established { $0.hangup() } == [.read(rememberSession: true)])
        _ = established { $0.flushRequested() }
        _ = established { $0.wrote(.wantRead) }
        #expect(established { $0.hangup() } == [.write, .read(rememberSession: true)], "the waiting write too")
        let closing = establishedClient()
        _ = closing { $0.closeRequested(gracePeriod: 1) }
        #expect(closing { $0.hangup() } == [.read(rememberSession: false)])
        _ = closing { $0.abortRequested() }
        #expect(closing { $0.hangup() } == [])
    }
}
