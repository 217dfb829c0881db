import APNSTransport

/// The dispatcher's clock and timers on an `EventLoop`.
final class EventLoopScheduler: DispatchScheduler {
    private let loop: EventLoop
    private let origin = EventLoopInstant.now()

    init(loop: EventLoop) {
        self.loop = loop
    }

    var now: Double { EventLoopInstant.now().seconds(since: origin) }

    func schedule(after delay: Double, _ body: @escaping () -> Void) {
        if delay <= 0 {
            loop.executeNextTurn(body)
        } else {
            _ = loop.schedule(after: delay, body)
        }
    }
}
