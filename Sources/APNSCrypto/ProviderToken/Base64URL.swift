/// base64url (RFC 4648 section 5) without padding, as JWS uses it: `-` and `_` instead of `+` and `/`, no `=`.
/// Works on bytes directly (no Foundation `Data` round-trips). Decoding is strict: it rejects padding, any other
/// character, impossible lengths and non-zero unused trailing bits, so every text has at most one decoding.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Maps an ASCII byte to its 6-bit value, or 0xFF for bytes outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    /// The encoding of `bytes` as text.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        append(bytes, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// The number of characters `count` bytes encode to.
    public static func encodedLength(of count: Int) -> Int {
        (count * 4 + 2) / 3
    }

    /// Appends the encoding of `bytes` (ASCII) to `output`.
    public static func append(_ bytes: some Collection<UInt8>, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + encodedLength(of: bytes.count))
        let alphabet = Self.alphabet
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            if second != nil { output.append(alphabet[Int(group >> 6 & 0x3F)]) }
            if third != nil { output.append(alphabet[Int(group & 0x3F)]) }
        }
    }

    /// The bytes `text` encodes, or nil when it is not canonical unpadded base64url.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let remainder = text.count % 4
        guard remainder != 1 else { return nil }
        let values = Self.values
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3 + 2)
        var group: UInt32 = 0
        var filled = 0
        for character in text {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            filled += 1
            if filled == 4 {
                output.append(UInt8(truncatingIfNeeded: group >> 16))
                output.append(UInt8(truncatingIfNeeded: group >> 8))
                output.append(UInt8(truncatingIfNeeded: group))
                group = 0
                filled = 0
            }
        }
        switch filled {
        case 2:  // 12 bits: one byte and 4 unused bits
            guard group & 0xF == 0 else { return nil }
            output.append(UInt8(truncatingIfNeeded: group >> 4))
        case 3:  // 18 bits: two bytes and 2 unused bits
            guard group & 0x3 == 0 else { return nil }
            output.append(UInt8(truncatingIfNeeded: group >> 10))
            output.append(UInt8(truncatingIfNeeded: group >> 2))
        default:
            break
        }
        return output
    }

    /// The bytes `text` encodes, or nil when it is not canonical unpadded base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        decode(text.utf8)
    }
}
