/// The `apns-id` header: a UUID in canonical lowercase 8-4-4-4-12 form that APNs echoes back in its answer.
public struct APNSID: Hashable, Sendable, CustomStringConvertible {
    /// The id as lowercase ASCII bytes, 36 long.
    public let bytes: [UInt8]
    /// The id in its canonical text form.
    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// Validates and normalises a UUID string (upper case is accepted and lowered).
    public init(parsing text: some StringProtocol) throws(InputError) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else {
            throw InputError(.apnsIDInvalid, "apns-id '\(text)' is not a UUID (8-4-4-4-12 hex digits)")
        }
        var lowered = [UInt8](repeating: 0, count: 36)
        for (index, byte) in utf8.enumerated() {
            let dash = index == 8 || index == 13 || index == 18 || index == 23
            switch byte {
            case UInt8(ascii: "-") where dash: lowered[index] = byte
            case UInt8(ascii: "0")...UInt8(ascii: "9") where !dash, UInt8(ascii: "a")...UInt8(ascii: "f") where !dash:
                lowered[index] = byte
            case UInt8(ascii: "A")...UInt8(ascii: "F") where !dash: lowered[index] = byte + 32
            default:
                throw InputError(.apnsIDInvalid, "apns-id '\(text)' is not a UUID (8-4-4-4-12 hex digits)")
            }
        }
        self.bytes = lowered
    }

    /// Whether `bytes` read as a UUID (8-4-4-4-12 hex digits, either case): what an answer's `apns-id` must be to
    /// be written to a result file (a server's anything-else is dropped, never echoed).
    public static func isUUID(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == 36 else { return false }
        var index = 0
        for byte in bytes {
            let dash = index == 8 || index == 13 || index == 18 || index == 23
            let ok =
                dash
                ? byte == UInt8(ascii: "-")
                : (byte &- UInt8(ascii: "0") < 10 || (byte | 0x20) &- UInt8(ascii: "a") < 6)
            guard ok else { return false }
            index += 1
        }
        return true
    }

    /// Makes a fresh random (version 4) id, from two random words (this runs once per answer in the mock).
    @inlinable
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> APNSID {
        let high = (generator.next() & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000  // version 4
        let low = (generator.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000  // variant 10
        var text = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        // 8-4-4-4-12: each word gives 16 digits, stored four or eight at a time around the dashes.
        let first = hexDigits(UInt32(truncatingIfNeeded: high &>> 32))
        let second = hexDigits(UInt32(truncatingIfNeeded: high))
        let third = hexDigits(UInt32(truncatingIfNeeded: low &>> 32))
        let fourth = hexDigits(UInt32(truncatingIfNeeded: low))
        var span = text.mutableSpan
        var bytes = span.mutableBytes
        bytes.storeBytes(of: first, toByteOffset: 0, as: UInt64.self)
        bytes.storeBytes(of: UInt32(truncatingIfNeeded: second), toByteOffset: 9, as: UInt32.self)
        bytes.storeBytes(of: UInt32(truncatingIfNeeded: second &>> 32), toByteOffset: 14, as: UInt32.self)
        bytes.storeBytes(of: UInt32(truncatingIfNeeded: third), toByteOffset: 19, as: UInt32.self)
        bytes.storeBytes(of: UInt32(truncatingIfNeeded: third &>> 32), toByteOffset: 24, as: UInt32.self)
        bytes.storeBytes(of: fourth, toByteOffset: 28, as: UInt64.self)
        return APNSID(uncheckedBytes: text)
    }

    /// The eight lowercase hex digits of `value`, most significant first, as the bytes of a little-endian word:
    /// its bytes spread into 16-bit lanes, each lane split into its two nibbles, then `0`-`9`/`a`-`f` added to all
    /// sixteen at once (a nibble of 10 and up carries into bit 4 once 6 is added, which picks the letters).
    @inlinable
    static func hexDigits(_ value: UInt32) -> UInt64 {
        var lanes = UInt64(value.byteSwapped)
        lanes = (lanes | lanes &<< 16) & 0x0000_FFFF_0000_FFFF
        lanes = (lanes | lanes &<< 8) & 0x00FF_00FF_00FF_00FF
        let nibbles = (lanes &>> 4) & 0x000F_000F_000F_000F | (lanes & 0x000F_000F_000F_000F) &<< 8
        let letters = ((nibbles &+ 0x0606_0606_0606_0606) &>> 4) & 0x0101_0101_0101_0101
        return nibbles &+ 0x3030_3030_3030_3030 &+ letters &* 39
    }

    @usableFromInline
    init(uncheckedBytes: [UInt8]) {
        self.bytes = uncheckedBytes
    }
}
