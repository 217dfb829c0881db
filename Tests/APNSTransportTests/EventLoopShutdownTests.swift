import Synchronization
import Testing

@testable import APNSTransport

/// A handler that holds its loop, as a TLS connection or a listener does.
private final class LoopHoldingHandler: EventLoopHandler {
    let loop: EventLoop
    let socket: Socket

    init(loop: EventLoop, socket: Socket) {
        self.loop = loop
        self.socket = socket
    }

    func readable() {}
    func writable() {}
    func hangup() {}
}

/// What the closures left in a loop saw, from outside it.
private final class Observations {
    weak var loop: EventLoop?
    weak var socket: Socket?
    var ran: [String] = []
}

/// Counts work posted from other threads that ran.
private final class PostedWork: Sendable {
    let ran = Mutex(0)
}

@Suite("EventLoop shutdown")
struct EventLoopShutdownTests {
    @Test("shutdown drops timers, registrations and queued work unrun, so a loop they hold is freed")
    func shutdownFreesLoop() throws {
        let seen = Observations()
        let posted = PostedWork()
        try {
            let loop = try EventLoop()
            let (socket, _) = try Socket.pair()
            seen.loop = loop
            seen.socket = socket
            try loop.register(socket.fd, interest: .read, handler: LoopHoldingHandler(loop: loop, socket: socket))
            loop.schedule(after: 3600) { seen.ran.append("timer \(loop.pendingTimerCount)") }
            let cancelled = loop.schedule(after: 7200) { seen.ran.append("cancelled \(loop.registeredCount)") }
            loop.executeNextTurn { seen.ran.append("next turn \(loop.registeredCount)") }
            #expect(loop.handle.execute { _ in posted.ran.withLock { $0 += 1 } })

            loop.shutdown()
            #expect(loop.registeredCount == 0)
            #expect(loop.pendingTimerCount == 0)
            #expect(!cancelled.isPending)
            cancelled.cancel()  // after shutdown: does nothing
            #expect(!loop.handle.execute { _ in posted.ran.withLock { $0 += 1 } })
        }()
        #expect(seen.loop == nil)
        #expect(seen.socket == nil)  // its handler went, and the socket with it
        #expect(seen.ran.isEmpty)
        #expect(posted.ran.withLock { $0 } == 0)
    }
}
