internal import CNghttp2

/// The bytes and the prebuilt `nghttp2_nv` entries of one `HTTP2HeaderBlock`: one allocation holding every name
/// and value, and one array of entries flagged NO_COPY (pseudo-header fields first, then regular ones), which
/// `Nghttp2Session` copies into a request's entry list. Owns both allocations and frees them in `deinit`; the
/// entries point into the bytes, so this object must outlive every HEADERS frame built from it (see
/// `HTTP2HeaderBlock`).
final class Nghttp2HeaderBlockStorage {
    private let bytes: UnsafeMutableRawBufferPointer
    private let entries: UnsafeMutableBufferPointer<nghttp2_nv>
    /// How many of `entries` are pseudo-header fields (they come first).
    let pseudoCount: Int

    init(_ fields: [(name: String, value: String)]) throws(HTTP2Error) {
        for field in fields {
            guard Self.isValid(field) else { throw .invalidHeader(field.name) }
        }
        let total = fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, total), alignment: 1)
        let entries = UnsafeMutableBufferPointer<nghttp2_nv>.allocate(capacity: max(1, fields.count))
        let flags = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
        var offset = 0
        // Copies `text` into `bytes` at `offset` and returns where it lies.
        func place(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int) {
            let start = offset
            for byte in text.utf8 {
                bytes[offset] = byte
                offset += 1
            }
            let base = bytes.baseAddress.unsafelyUnwrapped.advanced(by: start).assumingMemoryBound(to: UInt8.self)
            return (base, offset - start)
        }
        let ordered = fields.filter { $0.name.hasPrefix(":") } + fields.filter { !$0.name.hasPrefix(":") }
        for (index, field) in ordered.enumerated() {
            let (name, nameCount) = place(field.name)
            let (value, valueCount) = place(field.value)
            entries[index] = nghttp2_nv(
                name: name, value: value, namelen: nameCount, valuelen: valueCount, flags: flags)
        }
        self.bytes = bytes
        self.entries = entries
        self.pseudoCount = fields.count(where: { $0.name.hasPrefix(":") })
        self.count = fields.count
    }

    /// The number of entries.
    let count: Int

    /// Copies entries `range` (pseudo-header ones are `0..<pseudoCount`) to `target`.
    func copyEntries(_ range: Range<Int>, to target: UnsafeMutablePointer<nghttp2_nv>) {
        guard let base = entries.baseAddress, !range.isEmpty else { return }
        target.update(from: base + range.lowerBound, count: range.count)
    }

    deinit {
        bytes.deallocate()
        entries.deallocate()
    }

    /// Whether nghttp2 would accept the field: a non-empty token name (after the `:` of a pseudo-header field)
    /// and a value without control characters.
    private static func isValid(_ field: (name: String, value: String)) -> Bool {
        var name = Array(field.name.utf8)
        if name.first == UInt8(ascii: ":") { name.removeFirst() }
        let value = Array(field.value.utf8)
        guard !name.isEmpty else { return false }
        let nameValid = name.withUnsafeBufferPointer { nghttp2_check_header_name($0.baseAddress, $0.count) != 0 }
        let valueValid =
            value.isEmpty
            || value.withUnsafeBufferPointer { nghttp2_check_header_value($0.baseAddress, $0.count) != 0 }
        return nameValid && valueValid
    }
}
