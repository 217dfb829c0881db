import APNSCore
import APNSPipeline
import APNSTransport

/// A send run's engine on APNSTransport: one `EventLoop` (clock, timers, turns), the `APNSClientPool` on it, and
/// the signals a `StopSignal` counts, handed to the run after the loop turn their eventfd wake-up caused.
final class EventLoopSendEngine: SendRunEngine {
    private let loop: EventLoop
    private let pool: APNSClientPool
    private let signals: StopSignal
    /// On the loop's clock, which leaves out the time the process was paused (`EventLoop.now()`).
    private let origin: EventLoopInstant
    private var stopRequested = false

    /// Builds the loop and the pool (credentials, CA file, TLS set-up); throws before anything connects.
    init(client: APNSClientConfiguration, signals: StopSignal) throws {
        let loop = try EventLoop()
        do {
            pool = try APNSClientPool(configuration: client, loop: loop)
        } catch {
            loop.shutdown()
            throw error
        }
        self.loop = loop
        self.signals = signals
        origin = loop.now()
    }

    var transport: any PushTransport { pool }

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
        pool.start()
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
