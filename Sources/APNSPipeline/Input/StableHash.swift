/// The hash functions whose values are part of the product's contract: shard assignment (`--shard K/N`) depends on
/// them, so they must give the same value on every machine, in every version, in every run (Swift's `Hasher` is
/// seeded per process and cannot be used). The duplicate filter, whose hashes live only in one run's memory, uses
/// its own faster hash and only `mix` from here.
///
/// FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over the bytes, then the MurmurHash3
/// `fmix64` finalizer so that every output bit depends on every input bit.
public enum StableHash {
    /// The FNV-1a 64-bit offset basis.
    public static let offsetBasis: UInt64 = 0xCBF2_9CE4_8422_2325
    /// The FNV-1a 64-bit prime.
    public static let prime: UInt64 = 0x0000_0100_0000_01B3

    /// FNV-1a 64 of `bytes`, continuing from `state`.
    @inline(__always)
    public static func fnv1a(_ bytes: some Sequence<UInt8>, state: UInt64 = offsetBasis) -> UInt64 {
        var hash = state
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* prime
        }
        return hash
    }

    /// FNV-1a 64 of one more byte.
    @inline(__always)
    public static func fnv1a(byte: UInt8, state: UInt64) -> UInt64 {
        (state ^ UInt64(byte)) &* prime
    }

    /// MurmurHash3's 64-bit finalizer: a bijection that spreads every input bit over the whole word.
    @inline(__always)
    public static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x = x &* 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x = x &* 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
    }

    /// `mix(fnv1a(bytes))`.
    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        mix(fnv1a(bytes))
    }
}
