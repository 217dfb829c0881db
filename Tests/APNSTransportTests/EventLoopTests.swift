import Foundation
import Glibc
import Synchronization
import Testing

@testable import APNSTransport

/// Records what the loop dispatched to it, reading what arrives so level-triggered readiness settles.
private final class RecordingHandler: EventLoopHandler {
    let socket: Socket
    var events: [String] = []
    var received: [UInt8] = []

    init(_ socket: Socket) { self.socket = socket }

    func readable() {
        var buffer = [UInt8](repeating: 0, count: 256)
        let result = socket.receive(into: &buffer)
        switch result {
        case .transferred(let count):
            received += buffer[..<count]
            events.append("readable")
        case .endOfFile: events.append("eof")
        case .wouldBlock, .failed: events.append("readable-nothing")
        }
    }

    func writable() { events.append("writable") }
    func hangup() { events.append("hangup") }
}

@Suite("EventLoop")
struct EventLoopTests {
    /// Runs turns until `done` or `seconds` pass.
    private func spin(_ loop: EventLoop, seconds: Double = 5, until done: () -> Bool) {
        let deadline = EventLoopInstant.now().advanced(bySeconds: seconds)
        while !done() && EventLoopInstant.now() < deadline { loop.runOnce(timeout: 0.05) }
    }

    @Test("timers fire in deadline order, ties in scheduling order")
    func timersInOrder() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        let start = loop.now()
        loop.schedule(at: start.advanced(bySeconds: 0.06)) { fired.append("c") }
        loop.schedule(at: start.advanced(bySeconds: 0.02)) { fired.append("a") }
        loop.schedule(at: start.advanced(bySeconds: 0.04)) { fired.append("b1") }
        loop.schedule(at: start.advanced(bySeconds: 0.04)) { fired.append("b2") }
        loop.schedule(at: start) { fired.append("now") }
        spin(loop) { fired.count == 5 }
        #expect(fired == ["now", "a", "b1", "b2", "c"])
        #expect(loop.now().seconds(since: start) >= 0.06)
        #expect(loop.pendingTimerCount == 0)
    }

    @Test("a timer falling due during a turn that woke for I/O sees a turn time no earlier than its deadline")
    func timerSeesItsDeadline() throws {
        let loop = try EventLoop(clock: .manual(EventLoopInstant(nanoseconds: 1_000_000_000_000)))
        let deadline = loop.now().advanced(bySeconds: 1)
        var seen: EventLoopInstant?
        loop.schedule(at: deadline) { seen = loop.turnTime }
        // Work from another thread wakes the turn; the clock passes the deadline while the turn handles it.
        #expect(loop.handle.execute { $0.advanceTime(bySeconds: 1) })
        for _ in 0..<50 where seen == nil { loop.runOnce(timeout: 0.01) }
        let turnTime = try #require(seen, "the timer never fired")
        #expect(
            turnTime >= deadline, "the timer's action saw the turn's time \(turnTime), before its deadline \(deadline)")
    }

    @Test("a cancelled timer never fires; the heap sheds cancelled entries")
    func cancel() throws {
        let loop = try EventLoop()
        var fired: [Int] = []
        var timers: [EventLoopTimer] = []
        for index in 0..<200 {
            timers.append(loop.schedule(after: 0.01 + Double(index) * 0.0001) { fired.append(index) })
        }
        for (index, timer) in timers.enumerated() where index % 4 != 0 { timer.cancel() }
        timers[1].cancel()  // twice: no effect
        #expect(loop.pendingTimerCount == 50)
        #expect(loop.timerHeap.count < 200)  // rebuilt once cancelled entries were the majority
        #expect(!timers[1].isPending && timers[0].isPending)
        spin(loop) { fired.count == 50 }
        loop.runOnce(timeout: 0.05)
        #expect(fired == Array(stride(from: 0, to: 200, by: 4)))
        #expect(!timers[0].isPending)
    }

    @Test("a timer scheduled for now from a timer waits for the next turn")
    func rearmDoesNotStarve() throws {
        let loop = try EventLoop()
        var count = 0
        func arm() {
            loop.schedule(after: 0) {
                count += 1
                arm()
            }
        }
        arm()
        loop.runOnce(timeout: 0)
        #expect(count == 1)
        loop.runOnce(timeout: 0)
        #expect(count == 2)
        loop.shutdown()  // the timer still armed holds the loop
    }

    @Test("turnTime holds still through a turn, moves on with the next, and is the clock outside a turn")
    func turnTimeIsPerTurn() throws {
        let loop = try EventLoop()
        var stamps: [(EventLoopInstant, EventLoopInstant)] = []
        func work() {
            let first = loop.turnTime
            usleep(3_000)
            stamps.append((first, loop.turnTime))
        }
        loop.executeNextTurn(work)
        loop.runOnce(timeout: 0)
        loop.executeNextTurn(work)
        loop.runOnce(timeout: 0)
        try #require(stamps.count == 2)
        #expect(stamps[0].0 == stamps[0].1, "the turn's time moved within the turn")
        #expect(stamps[1].0.seconds(since: stamps[0].0) >= 0.003, "the next turn kept the last turn's time")
        let outside = loop.turnTime
        usleep(2_000)
        #expect(loop.turnTime.seconds(since: outside) >= 0.002, "outside a turn it is not the clock")
        loop.shutdown()
    }

    @Test("currentTurn is nil outside a turn, holds through one, and counts each")
    func currentTurnCounts() throws {
        let loop = try EventLoop()
        #expect(loop.currentTurn == nil)
        var seen: [UInt64?] = []
        func work() {
            seen.append(loop.currentTurn)
            seen.append(loop.currentTurn)
        }
        loop.executeNextTurn(work)
        loop.runOnce(timeout: 0)
        #expect(loop.currentTurn == nil, "a turn's number outlived it")
        loop.runOnce(timeout: 0)
        loop.executeNextTurn(work)
        loop.runOnce(timeout: 0)
        try #require(seen.count == 4)
        let first = try #require(seen[0])
        #expect(seen[1] == first, "the number moved within a turn")
        #expect(seen[2] == first + 2 && seen[3] == first + 2, "\(seen): the turns between were not counted")
        loop.shutdown()
    }

    @Test("work posted from another thread wakes a blocked loop")
    func crossThreadExecute() throws {
        let loop = try EventLoop()
        let handle = loop.handle
        let ran = Mutex(false)
        let thread = Thread {
            usleep(50_000)
            handle.execute { loop in
                ran.withLock { $0 = loop.isInLoopThread }
            }
        }
        thread.start()
        let start = EventLoopInstant.now()
        // Without the eventfd wake-up this would sleep the whole 20 seconds.
        while !ran.withLock({ $0 }) && EventLoopInstant.now().seconds(since: start) < 20 {
            loop.runOnce(timeout: 20)
        }
        #expect(ran.withLock { $0 })
        #expect(EventLoopInstant.now().seconds(since: start) < 10)
    }

    @Test("handle.stop() from another thread ends run()")
    func crossThreadStop() throws {
        let loop = try EventLoop()
        let handle = loop.handle
        var turns = 0
        loop.schedule(after: 30) { turns += 1 }  // would keep run() sleeping
        let thread = Thread {
            usleep(50_000)
            handle.stop()
        }
        thread.start()
        let start = EventLoopInstant.now()
        loop.run()
        #expect(EventLoopInstant.now().seconds(since: start) < 10)
        #expect(turns == 0)
    }

    @Test("posting to a loop that is gone is refused")
    func executeAfterDeinit() throws {
        var loop: EventLoop? = try EventLoop()
        let handle = try #require(loop?.handle)
        #expect(handle.execute { _ in })
        loop = nil
        #expect(!handle.execute { _ in })
    }

    @Test("readiness on a socketpair reaches the registered handler")
    func readinessDispatch() throws {
        let loop = try EventLoop()
        let (left, right) = try Socket.pair()
        let handler = RecordingHandler(left)
        try loop.register(left.fd, interest: .read, handler: handler)
        #expect(throws: TransportError.self) { try loop.register(left.fd, interest: .read, handler: handler) }

        loop.runOnce(timeout: 0)
        #expect(handler.events.isEmpty)

        let message: [UInt8] = Array("hello".utf8)
        #expect(right.send(message.span.bytes) == .transferred(5))
        spin(loop) { !handler.received.isEmpty }
        #expect(handler.received == message)
        #expect(handler.events == ["readable"])

        #expect(loop.setInterest([.read, .write], for: left.fd))
        loop.runOnce(timeout: 1)
        #expect(handler.events.last == "writable")

        loop.setInterest(.none, for: left.fd)
        handler.events.removeAll()
        _ = right.send(message.span.bytes)
        loop.runOnce(timeout: 0.05)
        #expect(handler.events.isEmpty)

        right.close()
        spin(loop, seconds: 2) { !handler.events.isEmpty }
        #expect(handler.events == ["hangup"])

        loop.deregister(left.fd)
        #expect(loop.interest(for: left.fd) == nil)
        #expect(loop.registeredCount == 0)
        handler.events.removeAll()
        loop.runOnce(timeout: 0.05)
        #expect(handler.events.isEmpty)
    }

    @Test("a timer due in a turn finds every ready socket read first, more than one wait returns too")
    func inputReadBeforeTimers() throws {
        let loop = try EventLoop()
        var peers: [Socket] = []
        var handlers: [RecordingHandler] = []
        defer { for handler in handlers { loop.deregister(handler.socket.fd) } }
        for _ in 0..<300 {  // more than the 256 events one wait returns
            let (left, right) = try Socket.pair()
            let handler = RecordingHandler(left)
            try loop.register(left.fd, interest: .read, handler: handler)
            #expect(right.send([UInt8(7)].span.bytes) == .transferred(1))
            handlers.append(handler)
            peers.append(right)
        }
        var readWhenDue: Int?
        loop.schedule(at: loop.now()) { readWhenDue = handlers.count { !$0.received.isEmpty } }
        loop.runOnce(timeout: 0)
        #expect(readWhenDue == 300)
    }

    @Test("next-turn work runs after the current turn, without blocking")
    func nextTurn() throws {
        let loop = try EventLoop()
        var order: [Int] = []
        loop.executeNextTurn {
            order.append(1)
            loop.executeNextTurn { order.append(3) }
        }
        loop.executeNextTurn { order.append(2) }
        let start = EventLoopInstant.now()
        loop.runOnce(timeout: 10)
        #expect(order == [1, 2])
        loop.runOnce(timeout: 10)
        #expect(order == [1, 2, 3])
        #expect(EventLoopInstant.now().seconds(since: start) < 5)
    }

    @Test("listener accepts, connector connects, refused ports fail clearly")
    func listenAndConnect() throws {
        let loop = try EventLoop()
        var accepted: [Socket] = []
        let listener = try SocketListener(loop: loop) { accepted.append($0) }
        #expect(listener.port != 0)
        var connected: Result<Socket, TransportError>?
        let address = try #require(SocketAddress(ipAddress: "127.0.0.1", port: listener.port))
        let connector = SocketConnector(loop: loop, addresses: [address], timeout: 5) { connected = $0 }
        connector.start()
        spin(loop) { connected != nil && accepted.count == 1 }
        let socket = try #require(try connected?.get())
        #expect(socket.peerAddress()?.port == listener.port)
        #expect(accepted.count == 1)
        #expect(accepted.first?.peerAddress()?.port == socket.localAddress()?.port)

        listener.close()
        var refused: Result<Socket, TransportError>?
        let closedPort = try #require(SocketAddress(ipAddress: "127.0.0.1", port: listener.port))
        SocketConnector(loop: loop, addresses: [closedPort], timeout: 5) { refused = $0 }.start()
        spin(loop) { refused != nil }
        #expect(throws: TransportError.self) { try refused?.get() }
        if case .failure(let error) = refused {
            #expect(error.kind == .connectionRefused)
            #expect(error.description.contains("refused"))
        }
        #expect(loop.registeredCount == 0)
    }

    @Test("a loop-bound value travels through execute and is taken out on the loop")
    func bound() throws {
        let loop = try EventLoop()
        final class Counter { var value = 0 }
        let counter = Counter()
        let bound = EventLoopBound(counter, loop: loop)
        let handle = loop.handle
        let thread = Thread {
            handle.execute { loop in bound.value(in: loop).value += 1 }
        }
        thread.start()
        spin(loop) { counter.value == 1 }
        #expect(counter.value == 1)
    }

    @Test("names resolve off the loop; unknown names fail with the resolver's text")
    func resolve() throws {
        let loop = try EventLoop()
        var results: [String: Result<[SocketAddress], TransportError>] = [:]
        loop.resolve(host: "localhost", port: 443) { results["localhost"] = $0 }
        loop.resolve(host: "::1", port: 8443) { results["::1"] = $0 }
        loop.resolve(host: "no-such-host.invalid", port: 443) { results["invalid"] = $0 }
        spin(loop, seconds: 15) { results.count == 3 }
        let local = try #require(try results["localhost"]?.get())
        #expect(local.allSatisfy { $0.port == 443 && ($0.host == "127.0.0.1" || $0.host == "::1") })
        #expect(try results["::1"]?.get() == [try #require(SocketAddress(ipAddress: "::1", port: 8443))])
        #expect(try results["::1"]?.get().first?.description == "[::1]:8443")
        guard case .failure(let error) = results["invalid"] else {
            Issue.record("no-such-host.invalid resolved")
            return
        }
        #expect(error.kind == .nameResolutionFailed)
        #expect(error.description.contains("no-such-host.invalid"))
    }
}
