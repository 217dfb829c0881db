import APNSCore

/// The payload array of the last record read, handed out again when the next record's payload is the same bytes:
/// a broadcast (one payload, many tokens, as from a file of identical payloads) then makes no copy per record, and
/// its records in flight and in the retry queue share one array. Any other payload is copied once, as before; the
/// check costs a comparison of eight bytes a step that stops at the first difference.
struct RepeatedPayload {
    private var last: [UInt8] = []

    /// `bytes[range]` as its own array: the last one handed out when it holds the same bytes.
    mutating func array(of bytes: [UInt8], range: Range<Int>) -> [UInt8] {
        if last.count == range.count, ByteComparison.equal(last.span.bytes, bytes.span.extracting(range).bytes) {
            return last
        }
        last = Array(bytes[range])
        return last
    }

    /// `bytes` (a rendered template) as its own array: the last one handed out when it holds the same bytes.
    mutating func array(of bytes: [UInt8]) -> [UInt8] {
        array(of: bytes, range: bytes.indices)
    }
}
