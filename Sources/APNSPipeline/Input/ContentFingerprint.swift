/// A 128-bit fingerprint of a file's bytes, for a campaign's identity (`CampaignIdentity`): two independent 64-bit
/// lanes of multiply-rotate rounds (xxHash64's round and avalanche), sixteen bytes a step, the length mixed in. It
/// tells a rewritten campaign file from the same one, not an adversary's collision from it (nobody gains by making
/// their own campaign look unchanged), at about an instruction a byte: a campaign's bytes are hashed once a run, and
/// SHA-256 there cost a tenth of `send`'s instructions a request where the CPU has no SHA extensions (row 9 of
/// scripts/bench.sh, under callgrind). `.gz` files are fingerprinted as they are stored, compressed.
public struct ContentFingerprint: Sendable, Equatable {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63

    private var first: UInt64 = prime1 &+ prime2
    private var second: UInt64 = prime3
    private var length: UInt64 = 0
    /// Bytes of the last `add` short of a sixteen-byte step, taken into the next one.
    private var carry: [UInt8] = []

    /// A fingerprint of no content yet.
    public init() {}

    /// The fingerprint of the file at `path` as lowercase hex (32 digits), read 1 MiB at a time.
    public static func hex(ofFileAtPath path: String) throws(PipelineError) -> String {
        let file = try POSIXFile.openForReading(path)
        var fingerprint = ContentFingerprint()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = try file.read(into: &buffer, at: 0, count: buffer.count)
            if count == 0 { break }
            fingerprint.add(buffer, count: count)
        }
        return fingerprint.hex
    }

    /// Adds `bytes[0..<count]`.
    public mutating func add(_ bytes: [UInt8], count: Int) {
        precondition(count >= 0 && count <= bytes.count, "count outside the bytes")
        length &+= UInt64(count)
        var start = 0
        if !carry.isEmpty {
            let take = min(16 - carry.count, count)
            carry.append(contentsOf: bytes[0..<take])
            start = take
            guard carry.count == 16 else { return }
            let block = carry
            carry.removeAll(keepingCapacity: true)
            round(block.span.bytes, at: 0)
        }
        let raw = bytes.span.bytes
        var offset = start
        while offset &+ 16 <= count {
            round(raw, at: offset)
            offset &+= 16
        }
        if offset < count { carry.append(contentsOf: bytes[offset..<count]) }
    }

    /// The fingerprint of everything added, as lowercase hex.
    public var hex: String {
        let (high, low) = lanes
        return Self.hexDigits(high) + Self.hexDigits(low)
    }

    /// A 64-bit fingerprint of `bytes` in one call, for small per-record digests (`SentDigest`): the same rounds,
    /// sixteen bytes a step, then the last 0 to 15 bytes as one word and the bytes left (no carry buffer, so
    /// nothing is allocated), the length mixed in; `seed` chains one call's value into the next.
    public static func digest64(_ bytes: Span<UInt8>, seed: UInt64 = 0) -> UInt64 {
        var fingerprint = ContentFingerprint()
        fingerprint.first ^= seed
        let raw = bytes.bytes
        let count = bytes.count
        var offset = 0
        while offset &+ 16 <= count {
            fingerprint.round(raw, at: offset)
            offset &+= 16
        }
        var word: UInt64 = 0  // the first 8 of the last 0 to 15 bytes, when there are 8
        if offset &+ 8 <= count {
            word = UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset &+= 8
        }
        var tail: UInt64 = 0  // the last 0 to 7, one by one
        var shift: UInt64 = 0
        while offset < count {
            tail |= UInt64(bytes[offset]) << shift
            shift &+= 8
            offset &+= 1
        }
        let a = mix(fingerprint.first, count & 15 >= 8 ? word : tail)
        let b = mix(fingerprint.second, count & 15 >= 8 ? tail : 0)
        return avalanche(a ^ (b &* prime4) ^ UInt64(truncatingIfNeeded: count))
    }

    private var lanes: (high: UInt64, low: UInt64) {
        var a = first
        var b = second
        var tail = carry
        tail.append(contentsOf: [UInt8](repeating: 0, count: 16 - tail.count))
        let raw = tail.span.bytes
        a = Self.mix(
            a, UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: 0, as: UInt64.self)) ^ UInt64(carry.count))
        b = Self.mix(b, UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        let high = Self.avalanche(a ^ length &* Self.prime4)
        let low = Self.avalanche(b ^ high ^ (length << 32 | length >> 32))
        return (high, low)
    }

    @inline(__always)
    private mutating func round(_ raw: RawSpan, at offset: Int) {
        // Bounds-checked loads (every bit pattern is a valid UInt64): the caller keeps `offset + 16` in the span.
        first = Self.mix(first, UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self)))
        second = Self.mix(
            second, UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self)))
    }

    @inline(__always)
    private static func mix(_ accumulator: UInt64, _ word: UInt64) -> UInt64 {
        let sum = accumulator &+ word &* prime2
        return ((sum << 31) | (sum >> 33)) &* prime1
    }

    private static func avalanche(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= prime2
        x ^= x >> 29
        x &*= prime3
        x ^= x >> 32
        return x
    }

    private static func hexDigits(_ value: UInt64) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
