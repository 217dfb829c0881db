import APNSCore

/// A reusable list of header fields for one request or response: the name and value bytes in one growable byte
/// array, and where each field lies in it. Fill it, submit it (nghttp2 copies the bytes at submit time), then
/// `removeAll()` and fill it again for the next one: after the first few uses it never allocates.
///
/// Fields are sent as "never indexed" HPACK literals unless appended with `indexable: true`: values that change
/// with every request (`apns-id`, `apns-expiration`) would otherwise churn the HPACK dynamic table and push out the
/// campaign's constant fields (`apns-topic`, `apns-push-type`, `:authority`), which `HTTP2HeaderBlock` sends indexed.
/// Names must be lowercase (HTTP/2); nghttp2 lowercases copied names anyway.
public struct HTTP2HeaderFieldList: Sendable {
    /// Where one field lies in `bytes`.
    @usableFromInline
    struct Field: Sendable, Hashable {
        @usableFromInline var nameStart: Int32
        @usableFromInline var nameCount: Int32
        @usableFromInline var valueStart: Int32
        @usableFromInline var valueCount: Int32
        @usableFromInline var isPseudo: Bool
        var isIndexable: Bool
    }

    // The accessors a reader calls per field (the mock's scan of every request) are inlinable: across modules,
    // a call each cost more than the comparison it made.
    @usableFromInline private(set) var bytes: [UInt8] = []
    @usableFromInline private(set) var fields: [Field] = []
    /// How many fields start with `:` (they go on the wire before the regular ones).
    private(set) var pseudoCount = 0

    /// An empty list.
    public init() {}

    /// An empty list with room for `fields` fields of `bytes` bytes in all.
    public init(reservingFields fieldCapacity: Int, bytes byteCapacity: Int) {
        bytes.reserveCapacity(byteCapacity)
        fields.reserveCapacity(fieldCapacity)
    }

    /// The number of fields.
    @inlinable public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    /// Empties the list, keeping its storage.
    public mutating func removeAll() {
        bytes.removeAllKeepingStorage()
        fields.removeAllKeepingStorage()
        pseudoCount = 0
    }

    /// The name of field `index`.
    public func name(at index: Int) -> ArraySlice<UInt8> {
        let field = fields[index]
        return bytes[Int(field.nameStart)..<Int(field.nameStart + field.nameCount)]
    }

    /// The value of field `index`.
    public func value(at index: Int) -> ArraySlice<UInt8> {
        let field = fields[index]
        return bytes[Int(field.valueStart)..<Int(field.valueStart + field.valueCount)]
    }

    /// The length of field `index`'s name, in bytes.
    @inlinable public func nameCount(at index: Int) -> Int { Int(fields[index].nameCount) }

    /// The length of field `index`'s value, in bytes.
    @inlinable public func valueCount(at index: Int) -> Int { Int(fields[index].valueCount) }

    /// Whether field `index`'s name is the ASCII literal.
    @inlinable
    public func name(at index: Int, is literal: StaticString) -> Bool {
        let field = fields[index]
        return bytes(from: Int(field.nameStart), count: Int(field.nameCount), are: literal)
    }

    /// Whether field `index`'s value is the ASCII literal.
    @inlinable
    public func value(at index: Int, is literal: StaticString) -> Bool {
        let field = fields[index]
        return bytes(from: Int(field.valueStart), count: Int(field.valueCount), are: literal)
    }

    /// Whether field `index`'s name starts with the ASCII literal.
    @inlinable
    public func name(at index: Int, startsWith literal: StaticString) -> Bool {
        let field = fields[index]
        return Int(field.nameCount) >= literal.utf8CodeUnitCount
            && bytes(from: Int(field.nameStart), count: literal.utf8CodeUnitCount, are: literal)
    }

    /// Whether field `index`'s value starts with the ASCII literal.
    @inlinable
    public func value(at index: Int, startsWith literal: StaticString) -> Bool {
        let field = fields[index]
        return Int(field.valueCount) >= literal.utf8CodeUnitCount
            && bytes(from: Int(field.valueStart), count: literal.utf8CodeUnitCount, are: literal)
    }

    @inlinable @inline(__always)
    func bytes(from start: Int, count: Int, are literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount, start >= 0, count <= bytes.count &- start else { return false }
        let stored = bytes.span
        return literal.withUTF8Buffer { expected in
            var position = start
            for byte in expected {
                if stored[position] != byte { return false }  // within the guard's range
                position &+= 1
            }
            return true
        }
    }

    /// Whether field `index`'s value is exactly `other`, compared in place (no slice, and so no reference, per
    /// comparison): the mock checks each request's `authorization` and topic against its connection's.
    public func value(at index: Int, equals other: [UInt8]) -> Bool {
        let field = fields[index]
        let start = Int(field.valueStart)
        let count = Int(field.valueCount)
        guard count == other.count else { return false }
        return ByteComparison.equal(bytes.span.extracting(start..<(start + count)).bytes, other.span.bytes)
    }

    /// Whether field `index` is a pseudo-header field (its name starts with `:`).
    @inlinable public func isPseudo(at index: Int) -> Bool { fields[index].isPseudo }

    /// The value of the first field named `name`, if any.
    public func firstValue(of name: StaticString) -> ArraySlice<UInt8>? {
        for index in fields.indices where Self.equals(self.name(at: index), name) { return value(at: index) }
        return nil
    }

    /// How many fields are named `name`.
    public func count(of name: StaticString) -> Int {
        fields.indices.reduce(0) { $0 + (Self.equals(self.name(at: $1), name) ? 1 : 0) }
    }

    /// Whether `bytes` equal the ASCII literal.
    static func equals(_ bytes: ArraySlice<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { $0.elementsEqual(bytes) }
    }

    /// Appends a field received from nghttp2 (server side).
    mutating func append(received name: Nghttp2BorrowedBytes, value: Nghttp2BorrowedBytes) {
        let nameStart = bytes.count
        let valueStart = nameStart &+ name.count
        Nghttp2BorrowedBytes.append(name, value, to: &bytes)
        finish(nameStart: nameStart, valueStart: valueStart, indexable: false)
    }

    /// Appends a field whose value is `prefix` followed by `value` (for `:path` = `/3/device/` + token).
    public mutating func append(
        name: StaticString, prefix: StaticString = "", value: some Collection<UInt8>, indexable: Bool = false
    ) {
        append(name: name, prefix: prefix, indexable: indexable) { $0.append(contentsOf: value) }
    }

    /// The same for a value held in an array (the device token, an apns-id): a generic call across modules runs
    /// unspecialised, looking the collection's witnesses up per byte; this one copies the value in one piece.
    public mutating func append(
        name: StaticString, prefix: StaticString = "", value: [UInt8], indexable: Bool = false
    ) {
        append(name: name, prefix: prefix, indexable: indexable) { $0.append(contentsOf: value) }
    }

    /// The same for a value held in a String (the device token, the topic): its UTF-8 is copied in one piece.
    public mutating func append(
        name: StaticString, prefix: StaticString = "", value: String, indexable: Bool = false
    ) {
        // Not through the closure-taking body below: a closure capturing the String retained and released it.
        let nameStart = bytes.count
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        let valueStart = bytes.count
        prefix.withUTF8Buffer { bytes.append(contentsOf: $0) }
        if value.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: value.utf8)
        }
        finish(nameStart: nameStart, valueStart: valueStart, indexable: indexable)
    }

    private mutating func append(
        name: StaticString, prefix: StaticString, indexable: Bool, value appendValue: (inout [UInt8]) -> Void
    ) {
        let nameStart = bytes.count
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        let valueStart = bytes.count
        prefix.withUTF8Buffer { bytes.append(contentsOf: $0) }
        appendValue(&bytes)
        finish(nameStart: nameStart, valueStart: valueStart, indexable: indexable)
    }

    /// Overwrites the end of field `index`'s value, from byte `offset` on, with `tail` when `tail` is exactly as
    /// long as what it replaces, and returns true; otherwise changes nothing and returns false. For a list refilled
    /// with fields of the same shape (`:path` with the next device token), in one copy.
    public mutating func replaceValueTail(ofField index: Int, from offset: Int, with tail: String) -> Bool {
        let field = fields[index]
        guard offset >= 0, offset <= Int(field.valueCount) else { return false }
        let start = Int(field.valueStart) + offset
        let source = tail.utf8.span.bytes
        guard source.byteCount == Int(field.valueCount) - offset else { return false }
        // One copy: the target range lies inside `bytes` (the field's value, checked above) and is as long as
        // `source`.
        bytes.withUnsafeMutableBytes { target in
            source.withUnsafeBytes { tail in
                guard let to = target.baseAddress, let from = tail.baseAddress else { return }
                (to + start).copyMemory(from: from, byteCount: tail.count)
            }
        }
        return true
    }

    /// Appends a field with a decimal integer value, written without going through `String`.
    public mutating func append(name: StaticString, decimal: Int64, indexable: Bool = false) {
        let nameStart = bytes.count
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        let valueStart = bytes.count
        DecimalText.append(decimal, to: &bytes)
        finish(nameStart: nameStart, valueStart: valueStart, indexable: indexable)
    }

    /// Appends a field from raw bytes (tests and tools: a value need not be UTF-8).
    public mutating func append(name: [UInt8], value: [UInt8], indexable: Bool = false) {
        let nameStart = bytes.count
        bytes.append(contentsOf: name)
        let valueStart = bytes.count
        bytes.append(contentsOf: value)
        finish(nameStart: nameStart, valueStart: valueStart, indexable: indexable)
    }

    /// Appends a field from text (tests, tools, rarely used headers).
    public mutating func append(name: String, value: String, indexable: Bool = false) {
        let nameStart = bytes.count
        bytes.append(contentsOf: name.utf8)
        let valueStart = bytes.count
        bytes.append(contentsOf: value.utf8)
        finish(nameStart: nameStart, valueStart: valueStart, indexable: indexable)
    }

    private mutating func finish(nameStart: Int, valueStart: Int, indexable: Bool) {
        let isPseudo = valueStart > nameStart && bytes[nameStart] == UInt8(ascii: ":")
        fields.append(
            Field(
                nameStart: Int32(nameStart), nameCount: Int32(valueStart - nameStart),
                valueStart: Int32(valueStart), valueCount: Int32(bytes.count - valueStart),
                isPseudo: isPseudo, isIndexable: indexable
            ))
        if isPseudo { pseudoCount += 1 }
    }
}

// MARK: - HTTP2HeaderBlock

/// Header fields that stay the same for many requests (`:method POST`, `:scheme https`, `:authority`,
/// `authorization`, `apns-topic`, `apns-push-type` for a campaign), validated and laid out once in memory this
/// object owns, so that every request hands nghttp2 pointers to them instead of copying them
/// (`NGHTTP2_NV_FLAG_NO_COPY_NAME/VALUE`).
///
/// Lifetime: nghttp2 keeps those pointers until it has serialized the HEADERS frame. `HTTP2ClientSession` keeps
/// a strong reference to the block in each stream's slot until that stream ends, so a caller may replace its block
/// (a re-signed provider token) at any time and drop the old one. The block is immutable, so one block can serve
/// many connections.
public final class HTTP2HeaderBlock: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init, including the storage's bytes.

    /// The fields, in the order they go on the wire (names lowercased).
    public let fields: [(name: String, value: String)]
    let storage: Nghttp2HeaderBlockStorage

    /// Validates and lays out `fields`. Pseudo-header fields (`:method`…) may come in any position; they are
    /// always sent first. Names are lowercased.
    public init(_ fields: [(name: String, value: String)]) throws(HTTP2Error) {
        let lowered = fields.map { (name: $0.name.lowercased(), value: $0.value) }
        self.storage = try Nghttp2HeaderBlockStorage(lowered)
        self.fields = lowered
    }

    /// A block for requests: `:method`, `:scheme`, `:authority`, then `fields`.
    public convenience init(
        method: String = "POST", scheme: String = "https", authority: String,
        fields: [(name: String, value: String)] = []
    ) throws(HTTP2Error) {
        try self.init([(":method", method), (":scheme", scheme), (":authority", authority)] + fields)
    }

    /// The number of fields.
    public var count: Int { fields.count }
}

// MARK: - ArrayStorageReuse

/// Emptying the reused buffers of stream slots and field lists without touching arrays that hold nothing.
extension Array {
    /// Removes every element and keeps the capacity. An empty array is left alone:
    /// `removeAll(keepingCapacity: true)` on one that never held anything (most answers carry no body, and a server
    /// other than APNs sends no apns-id) still checks its storage and makes an empty buffer.
    @inline(__always)
    mutating func removeAllKeepingStorage() {
        if !isEmpty { removeAll(keepingCapacity: true) }
    }
}
