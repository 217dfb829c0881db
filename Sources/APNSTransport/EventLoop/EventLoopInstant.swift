internal import Glibc

/// A point on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds. Never jumps with wall-clock changes;
/// meaningful only within this process.
public struct EventLoopInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an arbitrary, fixed point (system boot on Linux).
    public let nanoseconds: UInt64

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

    public static func < (lhs: EventLoopInstant, rhs: EventLoopInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}
