#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Finds a byte in a byte array with the C library's `memchr` (vectorised: a record line of 200 bytes in a few
/// dozen instructions): the line readers' newline search, which looking at one byte per step made a tenth of
/// `validate`'s time, and eight bytes a step with checked loads still cost 300 instructions a line.
public enum ByteSearch {
    /// The index of the first `byte` in `bytes[range]`, or nil when there is none.
    public static func firstIndex(of byte: UInt8, in bytes: [UInt8], range: Range<Int>) -> Int? {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range outside the bytes")
        guard !range.isEmpty else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> Int? in
            // `range` lies inside `buffer` (checked above), so memchr reads only the bytes it names.
            guard let base = buffer.baseAddress,
                let found = memchr(base + range.lowerBound, Int32(byte), range.count)
            else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }
}

// MARK: - ByteComparison

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
                != b.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self)
            {
                return false
            }
            index &+= 8
        }
        if index < a.byteCount, a.byteCount >= 8 {
            // The last few bytes as the tail of one more word, which overlaps bytes already found equal.
            let last = a.byteCount &- 8
            return a.unsafeLoadUnaligned(fromByteOffset: last, as: UInt64.self)
                == b.unsafeLoadUnaligned(fromByteOffset: last, as: UInt64.self)
        }
        while index < a.byteCount {
            if a.unsafeLoadUnaligned(fromByteOffset: index, as: UInt8.self)
                != b.unsafeLoadUnaligned(fromByteOffset: index, as: UInt8.self)
            {
                return false
            }
            index &+= 1
        }
        return true
    }
}
