/// A validated APNs device token: an even-length run of hex digits of variable length, stored as lowercase ASCII.
///
/// Tokens are opaque and their length is not fixed (32 bytes today); never assume 64 characters. Parsing accepts
/// upper or lower case, and the grouped `<0123abcd 4567ef01 …>` form (with or without the angle brackets) that
/// some exports print. Anything else that is not a hex digit is rejected with its position.
public struct DeviceToken: Hashable, Sendable, CustomStringConvertible {
    /// The smallest token length accepted, in bytes.
    public static let minimumByteCount = 16
    /// The largest token length accepted, in bytes.
    public static let maximumByteCount = 200

    /// The token as lowercase hex, exactly as it goes into `/3/device/<token>` and into result lines. Held as a
    /// String, so a result line takes it without making one per record; `hex.utf8.span` gives its bytes.
    public let hex: String

    /// The token as lowercase hexadecimal.
    public var description: String { hex }
    /// The number of bytes the token encodes.
    public var byteCount: Int { hex.utf8.count / 2 }

    /// Parses a token from text.
    public init(parsing text: some StringProtocol) throws(InputError) {
        var utf8 = Array(text.utf8)
        try self.init(parsingUTF8: &utf8)
    }

    /// Parses a token from UTF-8 bytes without going through `String`.
    public init(parsingBytes bytes: some Collection<UInt8>) throws(InputError) {
        var utf8 = Array(bytes)
        try self.init(parsingUTF8: &utf8)
    }

    /// Parses a token from a slice of UTF-8 bytes (a record's member or cell). A token already in the stored form
    /// (lowercase hex digits, an accepted length) is copied once; any other goes through the full parse.
    public init(parsingBytes bytes: ArraySlice<UInt8>) throws(InputError) {
        if Self.isStoredForm(bytes) {
            self.init(storedForm: String(decoding: bytes, as: UTF8.self))
            return
        }
        var utf8 = Array(bytes)
        try self.init(parsingUTF8: &utf8)
    }

    private init(storedForm: String) {
        hex = storedForm
    }

    /// Whether `bytes` are lowercase hex digits only, an even number of them within the accepted length: a token
    /// exactly as `hex` would hold it, so a reader that only compares or looks up can skip making one.
    public static func isStoredForm(_ bytes: ArraySlice<UInt8>) -> Bool {
        isStoredForm(bytes.span)
    }

    /// `isStoredForm` of the bytes a span views (a caller holding an array and a range takes no reference to it).
    public static func isStoredForm(_ bytes: Span<UInt8>) -> Bool {
        let count = bytes.count
        guard count % 2 == 0, count >= 2 * minimumByteCount, count <= 2 * maximumByteCount else { return false }
        // '0'...'9' or 'a'...'f', without a branch per byte: digits and letters alternate at random in a token, and
        // a branch on which one a byte is mispredicts about every other byte.
        var invalid: UInt8 = 0
        for index in bytes.indices {
            let byte = bytes[index]
            let notDigit: UInt8 = byte &- UInt8(ascii: "0") < 10 ? 0 : 1
            let notLetter: UInt8 = byte &- UInt8(ascii: "a") < 6 ? 0 : 1
            invalid |= notDigit & notLetter
        }
        return invalid == 0
    }

    private init(parsingUTF8 utf8: inout [UInt8]) throws(InputError) {
        var start = 0
        var end = utf8.count
        while start < end, Self.isSpace(utf8[start]) { start += 1 }
        while end > start, Self.isSpace(utf8[end - 1]) { end -= 1 }
        let bracketed = end - start >= 2 && utf8[start] == UInt8(ascii: "<") && utf8[end - 1] == UInt8(ascii: ">")
        if bracketed {
            start += 1
            end -= 1
        }
        guard start < end else { throw InputError(.tokenEmpty, "device token is empty") }

        var hex: [UInt8] = []
        hex.reserveCapacity(end - start)
        for index in start..<end {
            let byte = utf8[index]
            if let lower = Self.lowercaseHexDigit(byte) {
                hex.append(lower)
            } else if Self.isSpace(byte) {
                continue  // "<a1b2c3d4 e5f6a7b8 …>" and "a1b2c3d4 e5f6a7b8 …": the grouped export forms
            } else {
                throw InputError(
                    .tokenNotHex,
                    "device token has a non-hex character \(Self.describe(byte)) at position \(index - start + 1)")
            }
        }
        guard !hex.isEmpty else { throw InputError(.tokenEmpty, "device token is empty") }
        guard hex.count % 2 == 0 else {
            throw InputError(.tokenOddLength, "device token has \(hex.count) hex digits: odd length")
        }
        let bytes = hex.count / 2
        guard bytes >= Self.minimumByteCount else {
            throw InputError(.tokenTooShort, "device token is \(bytes) bytes: shorter than \(Self.minimumByteCount)")
        }
        guard bytes <= Self.maximumByteCount else {
            throw InputError(.tokenTooLong, "device token is \(bytes) bytes: longer than \(Self.maximumByteCount)")
        }
        self.hex = String(decoding: hex, as: UTF8.self)
    }

    @inline(__always)
    private static func lowercaseHexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): return byte
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte + 32
        default: return nil
        }
    }

    @inline(__always)
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "0x" + String(byte, radix: 16, uppercase: true)
    }
}
