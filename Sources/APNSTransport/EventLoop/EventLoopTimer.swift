internal import Glibc

/// One action scheduled on an `EventLoop` at a monotonic deadline. The loop keeps it in its timer heap until it
/// fires or, once cancelled, until the heap drops it; cancelling only clears the action.
final class EventLoopTimerEntry {
    let deadline: EventLoopInstant
    /// Breaks ties between equal deadlines: timers scheduled first fire first.
    let sequence: UInt64
    var action: (() -> Void)?

    init(deadline: EventLoopInstant, sequence: UInt64, action: @escaping () -> Void) {
        self.deadline = deadline
        self.sequence = sequence
        self.action = action
    }

    func fires(before other: EventLoopTimerEntry) -> Bool {
        deadline == other.deadline ? sequence < other.sequence : deadline < other.deadline
    }
}

/// The cancel token for a scheduled timer. Loop-confined like its loop; cancelling twice, or after the timer
/// fired, does nothing.
public struct EventLoopTimer {
    let entry: EventLoopTimerEntry
    weak var loop: EventLoop?

    /// When the timer fires (or would have).
    public var deadline: EventLoopInstant { entry.deadline }

    /// Whether the timer is still waiting to fire (not fired, not cancelled).
    public var isPending: Bool { entry.action != nil }

    /// Cancels the timer: its action will not run.
    public func cancel() {
        loop?.cancelTimer(self)
    }
}

/// A binary min-heap of timer entries ordered by deadline, then scheduling order.
struct EventLoopTimerHeap {
    private(set) var entries: [EventLoopTimerEntry] = []

    var count: Int { entries.count }
    var first: EventLoopTimerEntry? { entries.first }

    mutating func push(_ entry: EventLoopTimerEntry) {
        entries.append(entry)
        siftUp(entries.count - 1)
    }

    mutating func popFirst() -> EventLoopTimerEntry? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return top
    }

    /// Drops every entry whose action is gone (cancelled) and restores the heap order.
    mutating func removeCancelled() {
        entries.removeAll { $0.action == nil }
        var index = entries.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].fires(before: entries[parent]) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let count = entries.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            var smallest = left
            let right = left + 1
            if right < count && entries[right].fires(before: entries[left]) { smallest = right }
            guard entries[smallest].fires(before: entries[parent]) else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

// MARK: - EventLoopInstant

/// A point on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds. Never jumps with wall-clock changes;
/// meaningful only within this process.
public struct EventLoopInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an arbitrary, fixed point (system boot on Linux).
    public let nanoseconds: UInt64

    /// An instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// The current monotonic time.
    public static func now() -> EventLoopInstant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return EventLoopInstant(nanoseconds: UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec))
    }

    /// This instant moved by `seconds` (negative moves back, clamped at zero).
    public func advanced(bySeconds seconds: Double) -> EventLoopInstant {
        let delta = seconds * 1e9
        if delta >= 0 {
            let add = delta >= Double(UInt64.max - nanoseconds) ? UInt64.max - nanoseconds : UInt64(delta)
            return EventLoopInstant(nanoseconds: nanoseconds + add)
        }
        let sub = -delta >= Double(nanoseconds) ? nanoseconds : UInt64(-delta)
        return EventLoopInstant(nanoseconds: nanoseconds - sub)
    }

    /// Seconds from `earlier` to this instant (negative when `earlier` is later).
    public func seconds(since earlier: EventLoopInstant) -> Double {
        if nanoseconds >= earlier.nanoseconds {
            return Double(nanoseconds - earlier.nanoseconds) / 1e9
        }
        return -Double(earlier.nanoseconds - nanoseconds) / 1e9
    }

    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: EventLoopInstant, rhs: EventLoopInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The instant in seconds.
    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}
