/// A validating, allocation-free JSON scanner over UTF-8 bytes: it checks RFC 8259 syntax (including UTF-8 inside
/// strings) and reports where values start and end, so callers pass JSON through as the bytes it was written in.
public struct JSONScanner {
    /// The kind of a scanned value.
    public enum Kind: Sendable, Equatable {
        case object, array, string, number, `true`, `false`, null
    }

    /// One scanned value: its kind and its byte range in the buffer (for strings, including the quotes).
    public struct Value: Sendable, Equatable {
        public let kind: Kind
        public let range: Range<Int>
        /// For strings: whether the content contains escapes (the raw bytes differ from the decoded text).
        public let hasEscapes: Bool
    }

    /// Nesting deeper than this is rejected, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 64

    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Validates that `range` holds exactly one JSON value, with optional surrounding white space.
    public func scanDocument(in range: Range<Int>) throws(JSONSyntaxError) -> Value {
        var position = skipSpace(range.lowerBound, range.upperBound)
        guard position < range.upperBound else {
            throw JSONSyntaxError(offset: position, message: "no JSON value")
        }
        let value = try scanValue(at: &position, end: range.upperBound, depth: 0)
        position = skipSpace(position, range.upperBound)
        guard position == range.upperBound else {
            throw JSONSyntaxError(offset: position, message: "unexpected data after the JSON value")
        }
        return value
    }

    /// Calls `body` with each member of an already validated object: the key's string value and the member's value.
    public func forEachMember(of object: Value, _ body: (_ key: Value, _ value: Value) -> Void) {
        guard object.kind == .object else { return }
        var position = object.range.lowerBound + 1
        let end = object.range.upperBound - 1
        while true {
            position = skipSpace(position, end)
            guard position < end, bytes[position] == UInt8(ascii: "\"") else { return }
            // The object was validated, so the scans below cannot fail; stop quietly if they ever do.
            guard let key = try? scanString(at: &position, end: end) else { return }
            position = skipSpace(position, end) + 1  // the colon
            position = skipSpace(position, end)
            guard let value = try? scanValue(at: &position, end: end, depth: 0) else { return }
            body(key, value)
            position = skipSpace(position, end)
            if position < end, bytes[position] == UInt8(ascii: ",") { position += 1 }
        }
    }

    /// Whether a string value's raw content equals `literal` (only for strings without escapes; others compare decoded).
    public func string(_ value: Value, equals literal: StaticString) -> Bool {
        guard value.kind == .string else { return false }
        if value.hasEscapes { return decodeString(value) == literal.description }
        let count = value.range.count - 2
        guard count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { expected in
            var index = value.range.lowerBound + 1
            for byte in expected {
                if bytes[index] != byte { return false }
                index += 1
            }
            return true
        }
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

    // MARK: - Scanning

    private func scanValue(at position: inout Int, end: Int, depth: Int) throws(JSONSyntaxError) -> Value {
        guard position < end else { throw JSONSyntaxError(offset: position, message: "unexpected end of JSON") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try scanObject(at: &position, end: end, depth: depth + 1)
        case UInt8(ascii: "["): return try scanArray(at: &position, end: end, depth: depth + 1)
        case UInt8(ascii: "\""): return try scanString(at: &position, end: end)
        case UInt8(ascii: "t"): return try scanLiteral("true", .true, at: &position, end: end)
        case UInt8(ascii: "f"): return try scanLiteral("false", .false, at: &position, end: end)
        case UInt8(ascii: "n"): return try scanLiteral("null", .null, at: &position, end: end)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try scanNumber(at: &position, end: end)
        default: throw JSONSyntaxError(offset: position, message: "unexpected character \(Self.show(bytes[position]))")
        }
    }

    private func scanObject(at position: inout Int, end: Int, depth: Int) throws(JSONSyntaxError) -> Value {
        guard depth <= Self.maximumDepth else { throw JSONSyntaxError(offset: position, message: "JSON nested too deeply") }
        let start = position
        position = skipSpace(position + 1, end)
        if position < end, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return Value(kind: .object, range: start..<position, hasEscapes: false)
        }
        while true {
            guard position < end, bytes[position] == UInt8(ascii: "\"") else {
                throw JSONSyntaxError(offset: position, message: "expected a string key")
            }
            _ = try scanString(at: &position, end: end)
            position = skipSpace(position, end)
            guard position < end, bytes[position] == UInt8(ascii: ":") else {
                throw JSONSyntaxError(offset: position, message: "expected ':' after a key")
            }
            position = skipSpace(position + 1, end)
            _ = try scanValue(at: &position, end: end, depth: depth)
            position = skipSpace(position, end)
            guard position < end else { throw JSONSyntaxError(offset: position, message: "unterminated object") }
            if bytes[position] == UInt8(ascii: "}") {
                position += 1
                return Value(kind: .object, range: start..<position, hasEscapes: false)
            }
            guard bytes[position] == UInt8(ascii: ",") else {
                throw JSONSyntaxError(offset: position, message: "expected ',' or '}' in an object")
            }
            position = skipSpace(position + 1, end)
        }
    }

    private func scanArray(at position: inout Int, end: Int, depth: Int) throws(JSONSyntaxError) -> Value {
        guard depth <= Self.maximumDepth else { throw JSONSyntaxError(offset: position, message: "JSON nested too deeply") }
        let start = position
        position = skipSpace(position + 1, end)
        if position < end, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return Value(kind: .array, range: start..<position, hasEscapes: false)
        }
        while true {
            _ = try scanValue(at: &position, end: end, depth: depth)
            position = skipSpace(position, end)
            guard position < end else { throw JSONSyntaxError(offset: position, message: "unterminated array") }
            if bytes[position] == UInt8(ascii: "]") {
                position += 1
                return Value(kind: .array, range: start..<position, hasEscapes: false)
            }
            guard bytes[position] == UInt8(ascii: ",") else {
                throw JSONSyntaxError(offset: position, message: "expected ',' or ']' in an array")
            }
            position = skipSpace(position + 1, end)
        }
    }

    private func scanString(at position: inout Int, end: Int) throws(JSONSyntaxError) -> Value {
        let start = position
        var index = position + 1
        var escapes = false
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                return Value(kind: .string, range: start..<position, hasEscapes: escapes)
            }
            if byte == UInt8(ascii: "\\") {
                escapes = true
                guard index + 1 < end else { break }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    guard index + 6 <= end, (2..<6).allSatisfy({ Self.isHexDigit(bytes[index + $0]) }) else {
                        throw JSONSyntaxError(offset: index, message: "invalid \\u escape")
                    }
                    index += 6
                default:
                    throw JSONSyntaxError(offset: index, message: "invalid escape \\\(Self.show(bytes[index + 1]))")
                }
            } else if byte < 0x20 {
                throw JSONSyntaxError(offset: index, message: "control character \(Self.show(byte)) in a string")
            } else if byte < 0x80 {
                index += 1
            } else {
                index = try skipUTF8Sequence(at: index, end: end)
            }
        }
        throw JSONSyntaxError(offset: start, message: "unterminated string")
    }

    /// Validates one multi-byte UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF).
    private func skipUTF8Sequence(at index: Int, end: Int) throws(JSONSyntaxError) -> Int {
        let length = UTF8Validation.sequenceLength(bytes, at: index, end: end)
        guard length > 0 else { throw JSONSyntaxError(offset: index, message: "invalid UTF-8") }
        return index + length
    }

    private func scanNumber(at position: inout Int, end: Int) throws(JSONSyntaxError) -> Value {
        let start = position
        var index = position
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < end, Self.isDigit(bytes[index]) else { throw JSONSyntaxError(offset: index, message: "invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < end, Self.isDigit(bytes[index]) { index += 1 }
        }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < end, Self.isDigit(bytes[index]) else { throw JSONSyntaxError(offset: index, message: "invalid number") }
            while index < end, Self.isDigit(bytes[index]) { index += 1 }
        }
        if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < end, Self.isDigit(bytes[index]) else { throw JSONSyntaxError(offset: index, message: "invalid number") }
            while index < end, Self.isDigit(bytes[index]) { index += 1 }
        }
        position = index
        return Value(kind: .number, range: start..<index, hasEscapes: false)
    }

    private func scanLiteral(_ word: StaticString, _ kind: Kind, at position: inout Int, end: Int) throws(JSONSyntaxError) -> Value {
        let start = position
        let count = word.utf8CodeUnitCount
        let matches = start + count <= end && word.withUTF8Buffer { expected in
            expected.enumerated().allSatisfy { bytes[start + $0.offset] == $0.element }
        }
        guard matches else { throw JSONSyntaxError(offset: start, message: "invalid literal") }
        position = start + count
        return Value(kind: kind, range: start..<position, hasEscapes: false)
    }

    // MARK: - Bytes

    @inline(__always)
    func skipSpace(_ start: Int, _ end: Int) -> Int {
        var index = start
        while index < end {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return index
            }
        }
        return index
    }

    private func hex4(at index: Int) -> UInt32 {
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

    @inline(__always) private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    @inline(__always) private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    private static func show(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16, uppercase: true)
    }
}
