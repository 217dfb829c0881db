/// Request latencies in logarithmic buckets (about 4 % wide) from 10 µs to over a minute: constant memory,
/// percentiles good to a few per cent.
public struct LatencyHistogram: Sendable {
    private static let bucketsPerDoubling = 16.0
    private static let smallest = 0.000_01
    private static let bucketCount = 400

    private var buckets = [UInt32](repeating: 0, count: LatencyHistogram.bucketCount)
    /// Latencies recorded.
    public private(set) var count = 0
    /// The longest latency recorded, in seconds; 0 when none.
    public private(set) var maximum = 0.0
    /// Every latency recorded, added up (a Prometheus summary's `_sum`).
    public private(set) var sum = 0.0

    /// An empty histogram.
    public init() {}

    /// Adds one latency, in seconds.
    public mutating func record(_ seconds: Double) {
        count += 1
        sum += seconds
        maximum = max(maximum, seconds)
        buckets[Self.bucket(for: seconds)] &+= 1
    }

    /// The latencies recorded since `earlier`, a copy of this histogram taken before (its maximum is this one's).
    public func subtracting(_ earlier: LatencyHistogram) -> LatencyHistogram {
        var interval = self
        for index in buckets.indices {
            interval.buckets[index] = buckets[index] &- min(buckets[index], earlier.buckets[index])
        }
        interval.count = max(0, count - earlier.count)
        interval.sum = max(0, sum - earlier.sum)
        return interval
    }

    /// The latency below which `fraction` (0...1) of the recorded ones fall, in seconds; 0 when empty.
    public func percentile(_ fraction: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for (index, bucketCount) in buckets.enumerated() {
            seen += Int(bucketCount)
            if seen >= rank { return min(maximum, Self.upperBound(of: index)) }
        }
        return maximum
    }

    private static func bucket(for seconds: Double) -> Int {
        guard seconds > smallest else { return 0 }
        let index = Int((log2(seconds / smallest) * bucketsPerDoubling).rounded(.up))
        return min(bucketCount - 1, max(0, index))
    }

    private static func upperBound(of index: Int) -> Double {
        smallest * exp2(Double(index) / bucketsPerDoubling)
    }
}

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif
