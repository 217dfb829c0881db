import APNSCore
import APNSPipeline
import APNSTransport

/// A campaign run's engine on APNSTransport, what `SendRun.run` turns on: one `EventLoop` (clock, timers, turns),
/// the `APNSClientPool` on it (one per provider key with several keys, behind a `TopicRoutedTransport`), and the
/// stop requests a `StopSignal` counts, handed to the run after the loop turn their wake-up caused.
public final class EventLoopSendEngine: SendRunEngine {
    private let loop: EventLoop
    private let pools: [APNSClientPool]
    /// The transport the engine sends on.
    public let transport: any PushTransport
    private let signals: StopSignal
    /// On the loop's clock, which leaves out the time the process was paused (`EventLoop.now()`).
    private let origin: EventLoopInstant
    private var stopRequested = false

    /// An engine with one provider key (or one client certificate) for every topic; `signals` stops the run from
    /// another thread (`StopSignal.raise`: the first stops it cleanly, the second abandons what is in flight).
    public convenience init(configuration: APNSClientConfiguration, signals: StopSignal = StopSignal()) throws {
        try self.init(configurations: [configuration], labels: [], routes: nil, signals: signals)
    }

    /// Builds the loop and the pools (credentials, CA file, TLS set-up); throws before anything connects. With
    /// several `configurations` (one per provider key), `routes` says which covers which topic and `labels` names
    /// them in messages, in the same order.
    public init(
        configurations: [APNSClientConfiguration], labels: [String], routes: TopicKeyRoutes?, signals: StopSignal
    ) throws {
        precondition(!configurations.isEmpty, "an engine needs one client configuration at least")
        let loop = try EventLoop()
        do {
            pools = try configurations.map { try APNSClientPool(configuration: $0, loop: loop) }
        } catch {
            loop.shutdown()
            throw error
        }
        if pools.count > 1, let routes {
            transport = TopicRoutedTransport(
                transports: pools, labels: labels, routes: routes,
                nextTurn: { [unowned loop] work in loop.executeNextTurn(work) })
        } else {
            transport = pools[0]  // one key: the pool itself, no routing on the way
        }
        self.loop = loop
        self.signals = signals
        origin = loop.now()
    }

    /// Seconds since the engine was created, read once per loop turn.
    public var now: Double { loop.turnTime.seconds(since: origin) }  // one clock read per loop turn

    /// Runs `body` on the loop after `delay` seconds.
    public func schedule(after delay: Double, _ body: @escaping () -> Void) {
        if delay <= 0 {
            loop.executeNextTurn(body)
        } else {
            _ = loop.schedule(after: delay, body)
        }
    }

    /// Runs the event loop until `stop()`, calling `onSignal` with the count of stop signals received.
    public func run(onSignal: @escaping (_ signalsReceived: Int) -> Void) {
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

    /// Makes `run` return after the current loop turn.
    public func stop() {
        stopRequested = true
    }

    /// Shuts the event loop down; call once `run` has returned.
    public func shutdown() {
        loop.shutdown()
    }
}
