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
        appendStringContents(text, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `text` escaped for the inside of a JSON string, without the quotes (a caller whose literal ends in
    /// the opening quote saves an append): what a result line or a prune row holds. Besides `"`, `\` and the C0
    /// controls it escapes, as `\uXXXX`, every character `PrintableText` escapes (DEL, the C1 controls, the line
    /// separators and the bidirectional controls), so a result file read with `cat` or `less` never shows one raw
    /// and a JSON reader still gets the same text back. One pass over its UTF-8 bytes, eight at a time, finds
    /// whether anything may need escaping (plain printable ASCII needs none); the common case (nothing) is then
    /// one copy of the bytes it checked in place.
    static func appendStringContents(_ text: String, to out: inout [UInt8]) {
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard !needsEscaping(bytes.span.bytes) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        guard copied != true else { return }
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80, escapes[Int(value)] != 0 {
                appendEscape(UInt8(value), to: &out)
            } else if PrintableText.needsEscaping(scalar) {
                appendUnicodeEscape(value, to: &out)  // DEL, C1, the separators and bidi controls: all in the BMP
            } else if value < 0x80 {
                out.append(UInt8(value))
            } else {
                out.append(contentsOf: String(Character(scalar)).utf8)
            }
        }
    }

    /// Whether any byte of `bytes` is `"`, `\`, a control character (below 0x20), DEL, or part of a non-ASCII
    /// character (which may be one `PrintableText` escapes). Eight bytes at a time with the scanner's
    /// `JSONScanner.escapedByteMask`; a string of eight bytes or more ends with the word of its last eight.
    static func needsEscaping(_ bytes: RawSpan) -> Bool {
        var index = 0  // each loop keeps its loads inside `bytes` (and each load checks it)
        while index &+ 8 <= bytes.byteCount {
            let word = UInt64(littleEndian: bytes.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self))
            if JSONScanner.escapedByteMask(word) | delOrAboveMask(word) != 0 { return true }
            index &+= 8
        }
        if index < bytes.byteCount, bytes.byteCount >= 8 {
            // The last few bytes as the tail of one more word, which overlaps bytes already found clean.
            let last = bytes.byteCount &- 8
            let word = UInt64(littleEndian: bytes.unsafeLoadUnaligned(fromByteOffset: last, as: UInt64.self))
            return JSONScanner.escapedByteMask(word) | delOrAboveMask(word) != 0
        }
        while index < bytes.byteCount {
            let byte = bytes.unsafeLoadUnaligned(fromByteOffset: index, as: UInt8.self)
            if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            index &+= 1
        }
        return false
    }

    /// Nonzero when a byte of `word` is 0x7F or above: bit 7 of the byte or of the byte plus one. A carry out of a
    /// byte comes only from 0xFF, which its own bit 7 already finds.
    @inline(__always)
    static func delOrAboveMask(_ word: UInt64) -> UInt64 {
        (word | (word &+ 0x0101_0101_0101_0101)) & 0x8080_8080_8080_8080
    }

    private static func appendUnicodeEscape(_ value: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        out.append(UInt8(ascii: "u"))
        for shift: UInt32 in [12, 8, 4, 0] { out.append(hexDigits[Int((value >> shift) & 0xF)]) }
    }

    /// For each byte, the letter after the backslash that escapes it in a JSON string (`u` for `\u00XX`), or 0
    /// when it passes through: `"` `\` and the control characters below 0x20 (a `String` is always valid UTF-8).
    static let escapes: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
        switch byte {
        case 0x22: UInt8(ascii: "\"")
        case 0x5C: UInt8(ascii: "\\")
        case 0x0A: UInt8(ascii: "n")
        case 0x0D: UInt8(ascii: "r")
        case 0x09: UInt8(ascii: "t")
        case 0x08: UInt8(ascii: "b")
        case 0x0C: UInt8(ascii: "f")
        case 0..<0x20: UInt8(ascii: "u")
        default: 0
        }
    }

    private static func appendEscape(_ byte: UInt8, to out: inout [UInt8]) {
        let letter = escapes[Int(byte)]
        out.append(UInt8(ascii: "\\"))
        out.append(letter)
        if letter == UInt8(ascii: "u") {
            out.append(contentsOf: [
                UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)],
            ])
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
