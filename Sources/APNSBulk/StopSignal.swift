import APNSTransport
import Synchronization

/// How many times a run was asked to stop, and the event loop each request wakes: raised from any thread (the
/// command's SIGINT/SIGTERM queue, or a library user's own), read on the loop after the turn the wake-up caused
/// (`EventLoopSendEngine.run`): the first request stops the run cleanly, the second abandons what is in flight. No
/// polling: the loop sleeps until the eventfd write that `EventLoopHandle.execute` makes.
public final class StopSignal: Sendable {
    private let count = Atomic<Int>(0)
    private let loop = Mutex<EventLoopHandle?>(nil)

    /// A stop signal not yet raised.
    public init() {}

    /// Records one stop request and wakes the loop, if one is listening; the posted work is empty: the wake-up is the
    /// message, the count its content. Signals raised before a loop listens are read on its first turn.
    public func raise() {
        count.add(1, ordering: .relaxed)
        let handle = loop.withLock { $0 }
        handle?.execute { _ in }
    }

    /// How many stop requests arrived so far.
    public var received: Int { count.load(ordering: .relaxed) }

    /// The loop to wake from now on (nil: none).
    public func wake(_ handle: EventLoopHandle?) {
        loop.withLock { $0 = handle }
    }
}
