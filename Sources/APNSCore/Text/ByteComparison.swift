/// Compares byte sequences eight bytes at a time: the mock compares each request's `authorization` (about 200
/// bytes) and topic with its connection's, and a generic `==` on slices looked at one byte per step.
public enum ByteComparison {
    /// Whether `a` and `b` hold the same bytes.
    public static func equal(_ a: RawSpan, _ b: RawSpan) -> Bool {
        guard a.byteCount == b.byteCount else { return false }
        var index = 0
        // Every offset below is inside both spans (equal lengths, loop bounds); each load checks it again.
        while index &+ 8 <= a.byteCount {
            if a.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self)
                != b.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self) { return false }
            index &+= 8
        }
        while index < a.byteCount {
            if a.unsafeLoadUnaligned(fromByteOffset: index, as: UInt8.self)
                != b.unsafeLoadUnaligned(fromByteOffset: index, as: UInt8.self) { return false }
            index &+= 1
        }
        return true
    }
}
