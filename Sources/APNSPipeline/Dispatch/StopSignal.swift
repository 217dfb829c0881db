import Synchronization

/// How many times SIGINT/SIGTERM arrived: set from a signal-handling queue, read on the event loop.
public final class StopSignal: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// Records one signal.
    public func raise() {
        count.add(1, ordering: .relaxed)
    }

    /// How many signals arrived so far.
    public var received: Int { count.load(ordering: .relaxed) }
}
