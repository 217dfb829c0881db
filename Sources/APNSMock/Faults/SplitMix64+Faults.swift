import APNSCore

/// The mock's fault draws from its seeded generator: Bernoulli draws at a rate, and uniform latencies.
extension SplitMix64 {
    /// A Bernoulli draw: true with probability `threshold / 2^64` (see `Self.threshold(forRate:)`).
    @inline(__always)
    mutating func draw(threshold: UInt64) -> Bool {
        threshold == .max || next() < threshold
    }

    /// The 64-bit threshold for a probability in 0...1; `UInt64.max` means always.
    static func threshold(forRate rate: Double) -> UInt64 {
        guard rate > 0 else { return 0 }
        guard rate < 1 else { return .max }
        let scaled = rate * 18_446_744_073_709_551_616.0  // 2^64
        return scaled >= 18_446_744_073_709_551_615.0 ? .max : UInt64(scaled)
    }

    /// A uniform integer in `range` (inclusive), without modulo bias worth mentioning for the small ranges used here.
    @inline(__always)
    mutating func integer(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard span > 1 else { return range.lowerBound }
        let high = next().multipliedFullWidth(by: span).high
        return range.lowerBound + Int(high)
    }
}
