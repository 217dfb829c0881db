/// A validating, allocation-free JSON scanner over UTF-8 bytes: it checks RFC 8259 syntax (including UTF-8 inside
/// strings) and reports where values start and end, so callers pass JSON through as the bytes it was written in.
public struct JSONScanner {
    /// The kind of a scanned value.
    public enum Kind: Sendable, Equatable {
        case object, array, string, number, `true`, `false`, null
    }

    /// One scanned value: its kind and its byte range in the buffer (for strings, including the quotes).
    public struct Value: Sendable, Equatable {
        /// What kind of JSON value the token is.
        public let kind: Kind
        /// The value's byte range in the scanned bytes.
        public let range: Range<Int>
        /// For strings: whether the content contains escapes (the raw bytes differ from the decoded text).
        public let hasEscapes: Bool

        @usableFromInline
        init(kind: Kind, range: Range<Int>, hasEscapes: Bool) {
            self.kind = kind
            self.range = range
            self.hasEscapes = hasEscapes
        }
    }

    /// Nesting deeper than this is rejected, so hostile input cannot exhaust the stack.
    public static let maximumDepth = 64

    /// The JSON text being scanned.
    public let bytes: [UInt8]

    /// A scanner positioned at the start of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Receives object members during a scan: the nesting depth of the object holding the member (1 for the
    /// document's own members), the key's string value and the member's value. A member is reported once its value
    /// is scanned, so the members of a nested object come before the member holding that object.
    public typealias MemberVisitor = (_ depth: Int, _ key: Value, _ value: Value) -> Void

    /// Validates that `range` holds exactly one JSON value, with optional surrounding white space.
    public func scanDocument(in range: Range<Int>) throws(JSONSyntaxError) -> Value {
        var none = IgnoredMembers()
        return try scanDocument(in: range, reportingMembersTo: 0, to: &none)
    }

    /// Validates like `scanDocument(in:)` and, in the same pass, reports to `visit` every member of the objects
    /// nested at most `maximumReportedDepth` deep (1: the document's own members). Nothing is scanned twice, so
    /// a caller learns a record's members, and what their values hold, from this one scan.
    public func scanDocument(
        in range: Range<Int>, reportingMembersTo maximumReportedDepth: Int, _ visit: MemberVisitor
    ) throws(JSONSyntaxError) -> Value {
        try withoutActuallyEscaping(visit) { (visit) throws(JSONSyntaxError) -> Value in
            var visitor = ClosureMemberVisitor(visit: visit)
            return try scanDocument(in: range, reportingMembersTo: maximumReportedDepth, to: &visitor)
        }
    }

    /// The same scan reporting to a `JSONMemberVisitor`: inlinable, so a caller's module specializes the whole
    /// scan for its visitor and each member reaches it without a call through a closure.
    @inlinable
    public func scanDocument<Visitor: JSONMemberVisitor>(
        in range: Range<Int>, reportingMembersTo maximumReportedDepth: Int, to visitor: inout Visitor
    ) throws(JSONSyntaxError) -> Value {
        // Every scan stays inside `range`; the string scan's word loads rely on it being inside `bytes`.
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range outside the bytes")
        var position = skipSpaceInScan(range.lowerBound, range.upperBound)
        guard position < range.upperBound else {
            throw JSONSyntaxError(offset: position, message: "no JSON value")
        }
        let value = try scanValue(at: &position, end: range.upperBound, depth: 0, maximumReportedDepth, &visitor)
        position = skipSpaceInScan(position, range.upperBound)
        guard position == range.upperBound else {
            throw JSONSyntaxError(offset: position, message: "unexpected data after the JSON value")
        }
        return value
    }

    /// Calls `body` with each member of an already validated object: the key's string value and the member's value.
    public func forEachMember(of object: Value, _ body: (_ key: Value, _ value: Value) -> Void) {
        guard object.kind == .object, object.range.lowerBound >= 0, object.range.upperBound <= bytes.count else {
            return
        }
        var position = object.range.lowerBound + 1
        let end = object.range.upperBound - 1
        while true {
            position = skipSpace(position, end)
            guard position < end, byte(at: position) == UInt8(ascii: "\"") else { return }
            // The object was validated, so the scans below cannot fail; stop quietly if they ever do.
            guard let key = try? scanString(at: &position, end: end) else { return }
            position = skipSpace(position, end) + 1  // the colon
            position = skipSpace(position, end)
            var none = IgnoredMembers()
            guard let value = try? scanValue(at: &position, end: end, depth: 0, 0, &none) else { return }
            body(key, value)
            position = skipSpace(position, end)
            if position < end, byte(at: position) == UInt8(ascii: ",") { position += 1 }
        }
    }

    // MARK: - Scanning

    // Every container scan carries `reported` (the deepest object whose members go to `visitor`) and `visitor`.

    @inlinable
    func scanValue<Visitor: JSONMemberVisitor>(
        at position: inout Int, end: Int, depth: Int, _ reported: Int, _ visitor: inout Visitor
    ) throws(JSONSyntaxError) -> Value {
        guard position < end else { throw JSONSyntaxError(offset: position, message: "unexpected end of JSON") }
        switch byte(at: position) {
        case UInt8(ascii: "{"):
            return try scanContainer(.object, at: &position, end: end, depth: depth + 1, reported, &visitor)
        case UInt8(ascii: "["):
            return try scanContainer(.array, at: &position, end: end, depth: depth + 1, reported, &visitor)
        case UInt8(ascii: "\""): return try scanPlainString(at: &position, end: end)
        case UInt8(ascii: "t"): return try scanLiteral("true", .true, at: &position, end: end)
        case UInt8(ascii: "f"): return try scanLiteral("false", .false, at: &position, end: end)
        case UInt8(ascii: "n"): return try scanLiteral("null", .null, at: &position, end: end)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try scanNumber(at: &position, end: end)
        default: throw JSONSyntaxError(offset: position, message: "unexpected character \(Self.show(bytes[position]))")
        }
    }

    /// A member's or element's value: a plain string scanned right here (most values in a record are strings), any
    /// other value through `scanValue`, which also reports a missing value.
    @inlinable @inline(__always)
    func scanMemberValue<Visitor: JSONMemberVisitor>(
        at position: inout Int, end: Int, depth: Int, _ reported: Int, _ visitor: inout Visitor
    ) throws(JSONSyntaxError) -> Value {
        if position < end, byte(at: position) == UInt8(ascii: "\"") {
            return try scanPlainString(at: &position, end: end)
        }
        return try scanValue(at: &position, end: end, depth: depth, reported, &visitor)
    }

    /// An object or array (`container`, whose bracket is at `position`): its members or elements, and the
    /// members `visitor` is to hear of. Inlined at its two calls, so each copy knows its `container`.
    @inlinable @inline(__always)
    func scanContainer<Visitor: JSONMemberVisitor>(
        _ container: Kind, at position: inout Int, end: Int, depth: Int, _ reported: Int, _ visitor: inout Visitor
    ) throws(JSONSyntaxError) -> Value {
        let start = position
        if try opensEmpty(container, at: &position, end: end, depth: depth) {
            return Value(kind: container, range: start..<position, hasEscapes: false)
        }
        while true {
            if container == .array {
                _ = try scanMemberValue(at: &position, end: end, depth: depth, reported, &visitor)
            } else {
                guard position < end, byte(at: position) == UInt8(ascii: "\"") else {
                    throw JSONSyntaxError(offset: position, message: "expected a string key")
                }
                let key = try scanPlainString(at: &position, end: end)
                position = skipSpaceInScan(position, end)
                guard position < end, byte(at: position) == UInt8(ascii: ":") else {
                    throw JSONSyntaxError(offset: position, message: "expected ':' after a key")
                }
                position = skipSpaceInScan(position + 1, end)
                let value = try scanMemberValue(at: &position, end: end, depth: depth, reported, &visitor)
                if depth <= reported { visitor.member(depth: depth, key: key, value: value, in: self) }
            }
            if try closesAfterItem(container, at: &position, end: end) {
                return Value(kind: container, range: start..<position, hasEscapes: false)
            }
        }
    }

    /// Steps into the object or array (`container`) whose bracket is at `position` and past the blanks after it;
    /// true when it closes right there (`{}`, `[]`), with `position` past its closing bracket. Checks the depth.
    @inlinable @inline(__always)
    func opensEmpty(_ container: Kind, at position: inout Int, end: Int, depth: Int) throws(JSONSyntaxError) -> Bool {
        guard depth <= Self.maximumDepth else {
            throw JSONSyntaxError(offset: position, message: "JSON nested too deeply")
        }
        position = skipSpaceInScan(position + 1, end)
        guard position < end, byte(at: position) == Self.closingBracket(of: container) else { return false }
        position += 1
        return true
    }

    /// After a member or element of the object or array `container`: steps past the blanks and the comma to the
    /// next one (false), or past the closing bracket (true).
    @inlinable @inline(__always)
    func closesAfterItem(_ container: Kind, at position: inout Int, end: Int) throws(JSONSyntaxError) -> Bool {
        position = skipSpaceInScan(position, end)
        guard position < end else {
            throw JSONSyntaxError(
                offset: position, message: container == .object ? "unterminated object" : "unterminated array")
        }
        if byte(at: position) == Self.closingBracket(of: container) {
            position += 1
            return true
        }
        guard byte(at: position) == UInt8(ascii: ",") else {
            let expected = container == .object ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array"
            throw JSONSyntaxError(offset: position, message: expected)
        }
        position = skipSpaceInScan(position + 1, end)
        return false
    }

    @inlinable @inline(__always)
    static func closingBracket(of container: Kind) -> UInt8 {
        container == .object ? UInt8(ascii: "}") : UInt8(ascii: "]")
    }

    /// The string scan, inlined where it is called for the commonest string: printable ASCII without escapes,
    /// whose first byte that needs a look is its closing quote. Any other string is scanned again from its start
    /// by `scanString`, which checks everything.
    @inlinable @inline(__always)
    func scanPlainString(at position: inout Int, end: Int) throws(JSONSyntaxError) -> Value {
        let start = position
        var index = start &+ 1
        let raw = bytes.span.bytes
        while index &+ 8 <= end {
            // `end` is inside `bytes` (the entry points check their ranges); the load checks its bounds too.
            let word = UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self))
            let mask = Self.specialByteMask(word)
            if mask != 0 {
                let special = index &+ mask.trailingZeroBitCount &>> 3
                guard byte(at: special) == UInt8(ascii: "\"") else { break }
                position = special &+ 1
                return Value(kind: .string, range: start..<position, hasEscapes: false)
            }
            index &+= 8
        }
        return try scanString(at: &position, end: end)
    }

    @inlinable
    func scanString(at position: inout Int, end: Int) throws(JSONSyntaxError) -> Value {
        let start = position
        var index = position + 1
        var escapes = false
        let raw = bytes.span.bytes
        while true {
            if index &+ 8 <= end {
                // Eight bytes at a time: a word with nothing to look at is skipped whole; otherwise the scan jumps
                // straight to its first byte that needs a look.
                // `end` is inside `bytes` (the entry points check their ranges); the load checks its bounds too.
                let word = UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self))
                let mask = Self.specialByteMask(word)
                if mask == 0 {
                    index &+= 8
                    continue
                }
                index &+= mask.trailingZeroBitCount &>> 3
            } else if index >= end {
                break
            }
            let byte = byte(at: index)
            // The common case first: printable ASCII (0x20-0x7F) that is neither the quote nor the backslash.
            if byte &- 0x20 < 0x60, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                index &+= 1
                continue
            }
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
            } else {
                index = try skipUTF8Sequence(at: index, end: end)
            }
        }
        throw JSONSyntaxError(offset: start, message: "unterminated string")
    }

    /// Bit 7 set in each byte of `word` (eight bytes loaded little-endian, so byte 0 is the first in memory) that
    /// the string scan must look at: the quote, the backslash, a control byte (below 0x20) or a non-ASCII byte (0x80
    /// and up). Bit tricks on the whole word: `x - 0x01…01 & ~x` sets bit 7 of a byte of `x` that is zero, and
    /// `x - 0x20…20 & ~x` of one below 0x20 (among bytes below 0x80, the only ones left). A borrow can also flag a
    /// byte after a real match, never one before it, so the lowest set bit marks the first byte to look at exactly
    /// and the mask is zero exactly when there is none.
    @inlinable @inline(__always)
    static func specialByteMask(_ word: UInt64) -> UInt64 {
        escapedByteMask(word) | word & 0x8080_8080_8080_8080
    }

    /// Bit 7 set in each byte of `word` that a JSON string must escape: the quote, the backslash and the control
    /// bytes below 0x20 (the first such byte exactly, as `specialByteMask` explains; nonzero exactly when there
    /// is one). The result-line writer uses it too, to find strings that need no escaping.
    @inlinable @inline(__always)
    public static func escapedByteMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let quote = (quotes &- ones) & ~quotes
        let backslash = (backslashes &- ones) & ~backslashes
        let control = (word &- ones &* 0x20) & ~word
        return (quote | backslash | control) & (ones &* 0x80)
    }

    /// Validates one multi-byte UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF).
    @inlinable
    func skipUTF8Sequence(at index: Int, end: Int) throws(JSONSyntaxError) -> Int {
        let length = UTF8Validation.sequenceLength(bytes, at: index, end: end)
        guard length > 0 else { throw JSONSyntaxError(offset: index, message: "invalid UTF-8") }
        return index + length
    }

    @inlinable
    func scanNumber(at position: inout Int, end: Int) throws(JSONSyntaxError) -> Value {
        let start = position
        var index = position
        if byte(at: index) == UInt8(ascii: "-") { index += 1 }
        guard index < end, Self.isDigit(byte(at: index)) else {
            throw JSONSyntaxError(offset: index, message: "invalid number")
        }
        if byte(at: index) == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < end, Self.isDigit(byte(at: index)) { index += 1 }
        }
        if index < end, byte(at: index) == UInt8(ascii: ".") {
            index += 1
            guard index < end, Self.isDigit(byte(at: index)) else {
                throw JSONSyntaxError(offset: index, message: "invalid number")
            }
            while index < end, Self.isDigit(byte(at: index)) { index += 1 }
        }
        if index < end, byte(at: index) == UInt8(ascii: "e") || byte(at: index) == UInt8(ascii: "E") {
            index += 1
            if index < end, byte(at: index) == UInt8(ascii: "+") || byte(at: index) == UInt8(ascii: "-") { index += 1 }
            guard index < end, Self.isDigit(byte(at: index)) else {
                throw JSONSyntaxError(offset: index, message: "invalid number")
            }
            while index < end, Self.isDigit(byte(at: index)) { index += 1 }
        }
        position = index
        return Value(kind: .number, range: start..<index, hasEscapes: false)
    }

    @inlinable
    func scanLiteral(_ word: StaticString, _ kind: Kind, at position: inout Int, end: Int) throws(JSONSyntaxError)
        -> Value
    {
        let start = position
        let count = word.utf8CodeUnitCount
        let matches =
            start + count <= end
            && word.withUTF8Buffer { expected in
                expected.enumerated().allSatisfy { bytes[start + $0.offset] == $0.element }
            }
        guard matches else { throw JSONSyntaxError(offset: start, message: "invalid literal") }
        position = start + count
        return Value(kind: kind, range: start..<position, hasEscapes: false)
    }

    // MARK: - Bytes

    /// The byte at `index`: every caller has checked `index` against its `end`, and every `end` is inside `bytes`
    /// (the entry points check their ranges); the read checks its bounds again, as every read here does.
    @inlinable @inline(__always)
    func byte(at index: Int) -> UInt8 { bytes.span[index] }

    /// The first index from `start` up to `end` that is not JSON white space, inside a scan: its positions are never
    /// negative and its `end` is inside `bytes` (the entry points check their ranges), so nothing is clamped and a
    /// byte that is no space, the common case, costs one compare.
    @inlinable @inline(__always)
    func skipSpaceInScan(_ start: Int, _ end: Int) -> Int {
        var index = start
        while index < end, byte(at: index) <= 0x20 {
            switch byte(at: index) {
            case 0x20, 0x09, 0x0A, 0x0D: index &+= 1
            default: return index
            }
        }
        return index
    }

    /// `skipSpaceInScan` for callers outside a scan, with `start` and `end` clamped into `bytes`.
    @inlinable @inline(__always)
    func skipSpace(_ start: Int, _ end: Int) -> Int {
        var index = Swift.max(start, 0)
        let end = Swift.min(end, bytes.count)  // also called from outside the scans: kept inside `bytes`
        while index < end {
            switch byte(at: index) {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return index
            }
        }
        return index
    }

    @inlinable @inline(__always) static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    @inlinable @inline(__always) static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    @usableFromInline
    static func show(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F
            ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16, uppercase: true)
    }
}

// MARK: - Decoding

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
                    bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                {
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

// MARK: - JSONSyntaxError

/// Where and why a byte buffer is not valid JSON: the 0-based byte offset into the scanned buffer and a short message.
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The zero-based byte offset where the error was found.
    public let offset: Int
    /// What is wrong at that offset.
    public let message: String

    /// An error at `offset` with `message`.
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// The message with its one-based byte position.
    public var description: String { "\(message) at byte \(offset + 1)" }
}

// MARK: - JSONMemberVisitor

/// Receives the object members a `JSONScanner` scan reports (`scanDocument(in:reportingMembersTo:to:)`): the nesting
/// depth of the object holding the member (1 for the document's own members), the key's string value and the
/// member's value, with the scanner (to read the key and value bytes). A member is reported once its value is
/// scanned, so the members of a nested object come before the member holding that object.
public protocol JSONMemberVisitor {
    mutating func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner)
}

/// A visitor for scans that report no members. It holds a byte: an empty struct passed `inout` has no address of
/// its own (swiftlang/swift#66099), and ThreadSanitizer then sees every scan on every thread write one place.
@usableFromInline
struct IgnoredMembers: JSONMemberVisitor {
    @usableFromInline var unused: UInt8 = 0
    @inlinable init() {}
    @inlinable func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner) {}
}

/// Reports members to a `JSONScanner.MemberVisitor` closure.
struct ClosureMemberVisitor: JSONMemberVisitor {
    let visit: (_ depth: Int, _ key: JSONScanner.Value, _ value: JSONScanner.Value) -> Void

    func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner) {
        visit(depth, key, value)
    }
}
