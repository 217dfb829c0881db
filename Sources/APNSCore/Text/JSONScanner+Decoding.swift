/// Reading scanned string values: comparing them with literals and decoding their escapes.
extension JSONScanner {
    /// Whether a string value's raw content equals `literal` (only for strings without escapes; others compare decoded).
    /// Inlined where it is called: callers compare member keys with several literals, most of a different length.
    @inlinable @inline(__always)
    public func string(_ value: Value, equals literal: StaticString) -> Bool {
        guard value.kind == .string else { return false }
        let count = value.range.count - 2
        if value.hasEscapes { return decodeString(value) == literal.description }
        guard count == literal.utf8CodeUnitCount else { return false }
        let start = value.range.lowerBound + 1
        let span = bytes.span
        return literal.withUTF8Buffer { expected in
            for offset in 0..<count where span[start + offset] != expected[offset] { return false }
            return true
        }
    }

    /// A short string's content as one word, for comparing keys in one step: its bytes (at most eight, never a
    /// zero byte: JSON escapes that one) little-endian, zeros above them. Nil for a string with escapes or longer
    /// than eight bytes. `JSONScanner.word(_:)` gives a literal's word.
    @inlinable @inline(__always)
    public func shortWord(_ value: Value) -> UInt64? {
        let count = value.range.count &- 2
        guard value.kind == .string, !value.hasEscapes, count <= 8 else { return nil }
        let start = value.range.lowerBound &+ 1
        guard start &+ 8 <= bytes.count else { return Self.word(bytes[start..<start &+ count]) }
        let loaded = UInt64(littleEndian: bytes.span.bytes.unsafeLoadUnaligned(fromByteOffset: start, as: UInt64.self))
        return count == 8 ? loaded : loaded & ((1 &<< (UInt64(count) &* 8)) &- 1)
    }

    /// The word `shortWord` gives for a string whose content is `text` (at most eight bytes).
    public static func word(_ text: some Collection<UInt8>) -> UInt64 {
        precondition(text.count <= 8, "a word holds at most eight bytes")
        var word: UInt64 = 0
        for (offset, byte) in text.enumerated() { word |= UInt64(byte) &<< (UInt64(offset) &* 8) }
        return word
    }

    /// The decoded text of a string value; an escaped lone surrogate (`"\ud800"`) becomes U+FFFD. Use
    /// `decodeStringExactly` where such a replacement must not pass silently (header values).
    public func decodeString(_ value: Value) -> String {
        decode(value, rejectingLoneSurrogates: false) ?? ""
    }

    /// The decoded text of a string value, or nil if it escapes a lone surrogate: a `\uD800`-`\uDFFF` escape that
    /// is not half of a high-low pair. RFC 8259 lets such escapes through its grammar, but they name no Unicode
    /// character, so no text (and no header value) can hold them.
    public func decodeStringExactly(_ value: Value) -> String? {
        decode(value, rejectingLoneSurrogates: true)
    }

    private func decode(_ value: Value, rejectingLoneSurrogates: Bool) -> String? {
        let content = (value.range.lowerBound + 1)..<(value.range.upperBound - 1)
        guard value.hasEscapes else { return String(decoding: bytes[content], as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(content.count)
        var index = content.lowerBound
        while index < content.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            let escape = bytes[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(at: index)
                index += 4
                if scalar >= 0xD800 && scalar < 0xDC00, index + 6 <= content.upperBound,
                   bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                    let low = hex4(at: index + 2)
                    if low >= 0xDC00 && low < 0xE000 {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        index += 6
                    }
                }
                guard let character = Unicode.Scalar(scalar) else {
                    if rejectingLoneSurrogates { return nil }
                    out.append(contentsOf: [0xEF, 0xBF, 0xBD])  // U+FFFD
                    continue
                }
                out.append(contentsOf: String(character).utf8)
            default: out.append(escape)  // \" \\ \/
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    func hex4(at index: Int) -> UInt32 {
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = bytes[index + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: digit = byte - UInt8(ascii: "A") + 10
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}
