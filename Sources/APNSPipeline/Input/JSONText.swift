import APNSCore

/// Hand-written JSON output into a reusable byte buffer: string escaping, integers, and the checks the template
/// needs. Nothing here allocates except when the output buffer grows.
enum JSONText {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `bytes[range]` escaped for the inside of a JSON string (no quotes added): `"` `\` and control
    /// characters are escaped; valid UTF-8 passes through; an invalid UTF-8 sequence becomes U+FFFD.
    static func appendEscaped(_ bytes: [UInt8], _ range: Range<Int>, to out: inout [UInt8]) {
        var index = range.lowerBound
        let end = range.upperBound
        while index < end {
            let byte = bytes[index]
            if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte < 0x80 {
                out.append(byte)
                index += 1
            } else if byte < 0x80 {
                appendEscape(byte, to: &out)
                index += 1
            } else {
                let length = UTF8Validation.sequenceLength(bytes, at: index, end: end)
                if length > 0 {
                    out.append(contentsOf: bytes[index..<(index + length)])
                    index += length
                } else {
                    out.append(contentsOf: [0xEF, 0xBF, 0xBD])
                    index += 1
                }
            }
        }
    }

    /// Appends `text` as a quoted, escaped JSON string.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: text.utf8)  // the common case: nothing to escape, one copy
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            if byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                out.append(byte)  // a String is always valid UTF-8
            } else {
                appendEscape(byte, to: &out)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        default:
            out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        }
    }

    /// Whether `bytes[range]` is exactly a JSON number, `true`, `false` or `null` (no surrounding space).
    static func isScalarLiteral(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        guard let first = range.first, let last = range.last,
              !isSpace(bytes[first]), !isSpace(bytes[last]),
              let value = try? JSONScanner(bytes).scanDocument(in: range)
        else { return false }
        switch value.kind {
        case .number, .true, .false, .null: return true
        case .object, .array, .string: return false
        }
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
