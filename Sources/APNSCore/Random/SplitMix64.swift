/// A tiny, fast, seedable random number generator (Steele, Lea and Flood's SplitMix64): the mock's only source of
/// randomness, so a run with the same seed and the same requests injects the same faults and ids (its fault draws
/// are in `APNSMock`), and the tests' (a generator with state: ThreadSanitizer builds crash on an empty one, such as
/// `SystemRandomNumberGenerator`, held in a local variable and passed `inout`, swiftlang/swift#66099).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    @usableFromInline var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// Inlinable: the mock draws from it for every answer (`APNSID.random`) and fault, in another module.
    @inlinable @inline(__always)
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
