/// Finds a byte in a byte array eight bytes at a time: the line readers' newline search, which looking at one byte
/// per step made a tenth of `validate`'s time.
public enum ByteSearch {
    /// The index of the first `byte` in `bytes[range]`, or nil when there is none.
    public static func firstIndex(of byte: UInt8, in bytes: [UInt8], range: Range<Int>) -> Int? {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range outside the bytes")
        let raw = bytes.span.bytes
        let ones: UInt64 = 0x0101_0101_0101_0101
        let pattern = ones &* UInt64(byte)
        var index = range.lowerBound
        // Each loop keeps the loads below inside `range`, checked above; each load checks its bounds again.
        // Sixteen bytes a turn while they last (a record line is a hundred bytes or more), then eight, then one.
        while index &+ 16 <= range.upperBound {
            let x = word(raw, at: index) ^ pattern
            let y = word(raw, at: index &+ 8) ^ pattern
            let first = (x &- ones) & ~x & (ones &* 0x80)
            let second = (y &- ones) & ~y & (ones &* 0x80)
            if first | second != 0 {
                if first != 0 { return index &+ first.trailingZeroBitCount &>> 3 }
                return index &+ 8 &+ second.trailingZeroBitCount &>> 3
            }
            index &+= 16
        }
        while index &+ 8 <= range.upperBound {
            // A byte equal to `byte` is a zero byte of `x`; `x - 0x01…01 & ~x` sets bit 7 of each zero byte, and a
            // borrow can flag only bytes after the first, so the lowest set bit is the first match (little-endian).
            let x = word(raw, at: index) ^ pattern
            let mask = (x &- ones) & ~x & (ones &* 0x80)
            if mask != 0 { return index &+ mask.trailingZeroBitCount &>> 3 }
            index &+= 8
        }
        while index < range.upperBound {
            if bytes[index] == byte { return index }
            index &+= 1
        }
        return nil
    }

    @inline(__always)
    private static func word(_ raw: RawSpan, at offset: Int) -> UInt64 {
        UInt64(littleEndian: raw.unsafeLoadUnaligned(fromByteOffset: offset, as: UInt64.self))
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
