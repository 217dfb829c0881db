import APNSCore
import APNSPipeline
import APNSTransport

/// A send run's engine on APNSTransport: one `EventLoop` (clock, timers, turns), the `APNSClientPool` on it (one per
/// provider key with `--topic-key`, behind a `TopicRoutedTransport`), and the signals a `StopSignal` counts,
/// handed to the run after the loop turn their eventfd wake-up caused.
final class EventLoopSendEngine: SendRunEngine {
    private let loop: EventLoop
    private let pools: [APNSClientPool]
    let transport: any PushTransport
    private let signals: StopSignal
    /// On the loop's clock, which leaves out the time the process was paused (`EventLoop.now()`).
    private let origin: EventLoopInstant
    private var stopRequested = false

    /// Builds the loop and the pools (credentials, CA file, TLS set-up); throws before anything connects.
    init(clients: RunClients, signals: StopSignal) throws {
        let loop = try EventLoop()
        do {
            pools = try clients.configurations.map { try APNSClientPool(configuration: $0, loop: loop) }
        } catch {
            loop.shutdown()
            throw error
        }
        if pools.count > 1, let routes = clients.routes {
            transport = TopicRoutedTransport(
                transports: pools, labels: clients.labels, routes: routes,
                nextTurn: { [unowned loop] work in loop.executeNextTurn(work) })
        } else {
            transport = pools[0]  // one key: the pool itself, no routing on the way
        }
        self.loop = loop
        self.signals = signals
        origin = loop.now()
    }

    var now: Double { loop.turnTime.seconds(since: origin) }  // one clock read per loop turn

    func schedule(after delay: Double, _ body: @escaping () -> Void) {
        if delay <= 0 {
            loop.executeNextTurn(body)
        } else {
            _ = loop.schedule(after: delay, body)
        }
    }

    func run(onSignal: @escaping (_ signalsReceived: Int) -> Void) {
        signals.wake(loop.handle)
        defer { signals.wake(nil) }
        for pool in pools { pool.start() }
        var signalsSeen = 0
        while !stopRequested {
            let received = signals.received
            if received > signalsSeen {
                signalsSeen = received
                onSignal(received)
                continue  // what the signal started may already have stopped the run
            }
            loop.runOnce(timeout: nil)
        }
    }

    func stop() {
        stopRequested = true
    }

    func shutdown() {
        loop.shutdown()
    }
}
