/// Makes text safe to print on one line of a report or a terminal: the one escaping function every human-readable
/// line the tool prints goes through (validate's report, error messages that quote input, the send summary).
///
/// Escaped, so that input can neither forge extra lines nor reach the terminal as a control sequence:
/// - C0 controls and DEL: `\t`, `\n`, `\r`, the others as `\u{1B}`;
/// - C1 controls (U+0080 to U+009F; U+009B is a one-character CSI on some terminals) as `\u{9B}`;
/// - the line and paragraph separators (U+2028, U+2029) and the bidirectional controls (U+061C, U+200E, U+200F,
///   U+202A to U+202E, U+2066 to U+2069), which reorder or break what a reader sees, as `\u{202E}`;
/// - in bytes, each byte that does not start a valid UTF-8 sequence as `\xFF`.
/// The backslash itself is kept, so escaping is idempotent: escaped text escaped again is unchanged.
public enum PrintableText {
    /// `text` with every character that is not printable on one line escaped.
    public static func escaping(_ text: some StringProtocol) -> String {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return String(text) }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            append(scalar, to: &out)
        }
        return out
    }

    /// `bytes` as text, decoded as UTF-8, with non-printable characters and invalid bytes escaped.
    public static func escaping(bytes: [UInt8]) -> String {
        var out = ""
        out.reserveCapacity(bytes.count + 8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                append(Unicode.Scalar(byte), to: &out)
                index += 1
                continue
            }
            let length = UTF8Validation.sequenceLength(bytes, at: index, end: bytes.count)
            guard length > 0 else {
                out += "\\x" + hex(UInt32(byte))
                index += 1
                continue
            }
            for scalar in String(decoding: bytes[index..<(index + length)], as: UTF8.self).unicodeScalars {
                append(scalar, to: &out)
            }
            index += length
        }
        return out
    }

    /// Whether a character must be escaped to be printed on one line.
    public static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        guard needsEscaping(scalar) else {
            out.unicodeScalars.append(scalar)
            return
        }
        switch scalar {
        case "\t": out += "\\t"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        default: out += "\\u{" + hex(scalar.value) + "}"
        }
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return digits.count < 2 ? "0" + digits : digits
    }
}
