/// The `apns-id` header: a UUID in canonical lowercase 8-4-4-4-12 form that APNs echoes back in its answer.
public struct APNSID: Hashable, Sendable, CustomStringConvertible {
    /// The id as lowercase ASCII bytes, 36 long.
    public let bytes: [UInt8]
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

    /// Makes a fresh random (version 4) id, from two random words (this runs once per answer in the mock).
    @inlinable
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> APNSID {
        let high = (generator.next() & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000  // version 4
        let low = (generator.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000   // variant 10
        var text = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        // Written through a span: an array subscript would check the buffer's uniqueness at each of 32 digits.
        var digits = text.mutableSpan
        var position = 0
        for nibble in 0..<32 {
            if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 { position &+= 1 }
            let word = nibble < 16 ? high : low
            let value = UInt8(truncatingIfNeeded: word &>> UInt64(60 &- (nibble & 15) &* 4)) & 0x0F
            digits[position] = value &+ (value < 10 ? 48 : 87)
            position &+= 1
        }
        return APNSID(uncheckedBytes: text)
    }

    @usableFromInline
    init(uncheckedBytes: [UInt8]) {
        self.bytes = uncheckedBytes
    }
}
