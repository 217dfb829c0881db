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

    /// Makes a fresh random (version 4) id.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> APNSID {
        var raw = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in raw.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return APNSID(uncheckedBytes: text)
    }

    private init(uncheckedBytes: [UInt8]) {
        self.bytes = uncheckedBytes
    }
}
