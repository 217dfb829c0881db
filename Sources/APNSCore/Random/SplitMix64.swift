/// A tiny, fast, seedable random number generator (Steele, Lea and Flood's SplitMix64): the mock's only source of
/// randomness, so a run with the same seed and the same requests injects the same faults and ids, and the tests'
/// (a generator with state: ThreadSanitizer builds crash on an empty one, such as `SystemRandomNumberGenerator`,
/// held in a local variable and passed `inout`, swiftlang/swift#66099).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    @inline(__always)
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A Bernoulli draw: true with probability `threshold / 2^64` (see `Self.threshold(forRate:)`).
    @inline(__always)
    public mutating func draw(threshold: UInt64) -> Bool {
        threshold == .max || next() < threshold
    }

    /// The 64-bit threshold for a probability in 0...1; `UInt64.max` means always.
    public static func threshold(forRate rate: Double) -> UInt64 {
        guard rate > 0 else { return 0 }
        guard rate < 1 else { return .max }
        let scaled = rate * 18_446_744_073_709_551_616.0  // 2^64
        return scaled >= 18_446_744_073_709_551_615.0 ? .max : UInt64(scaled)
    }

    /// A uniform integer in `range` (inclusive), without modulo bias worth mentioning for the small ranges used here.
    @inline(__always)
    public mutating func integer(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard span > 1 else { return range.lowerBound }
        let high = next().multipliedFullWidth(by: span).high
        return range.lowerBound + Int(high)
    }
}
