import Foundation

/// Where the validator gets the time (UNIX epoch seconds): the system clock, or a fixed instant tests move by hand
/// to drive token ages and the 20-minute rule.
public enum MockClock: Sendable, Hashable {
    case system
    case fixed(epochSeconds: Int64)

    /// The current time in epoch seconds.
    @inline(__always)
    public func epochSeconds() -> Int64 {
        switch self {
        case .system: return Int64(Date().timeIntervalSince1970)
        case .fixed(let seconds): return seconds
        }
    }

    /// The same clock moved forward (a fixed clock) or unchanged (the system clock).
    public func advanced(by seconds: Int64) -> MockClock {
        switch self {
        case .system: return .system
        case .fixed(let now): return .fixed(epochSeconds: now + seconds)
        }
    }
}
