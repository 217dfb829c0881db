import APNSTransport
import Synchronization

/// How many times SIGINT/SIGTERM arrived, and the event loop each one wakes: raised on the signal queue, read on
/// the loop after the turn the wake-up caused (`EventLoopSendEngine.run`). No polling: the loop sleeps until the
/// eventfd write that `EventLoopHandle.execute` makes.
final class StopSignal: Sendable {
    private let count = Atomic<Int>(0)
    private let loop = Mutex<EventLoopHandle?>(nil)

    /// Records one signal and wakes the loop, if one is listening; the posted work is empty: the wake-up is the
    /// message, the count its content. Signals raised before a loop listens are read on its first turn.
    func raise() {
        count.add(1, ordering: .relaxed)
        let handle = loop.withLock { $0 }
        handle?.execute { _ in }
    }

    /// How many signals arrived so far.
    var received: Int { count.load(ordering: .relaxed) }

    /// The loop to wake from now on (nil: none).
    func wake(_ handle: EventLoopHandle?) {
        loop.withLock { $0 = handle }
    }
}
