/// Writes integers as decimal ASCII digits into byte buffers (result lines, the send journal, HTTP/2 header
/// values): the one integer writer, no `String` made on the way.
public enum DecimalText {
    /// Appends `value` in decimal, with a leading `-` when it is negative. Inlinable, so each caller gets a copy
    /// specialised to its integer type (a generic call across modules looked the type's witnesses up per call).
    @inlinable
    public static func append<T: BinaryInteger>(_ value: T, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        append(magnitude: UInt64(value.magnitude), to: &out)
    }

    /// Appends `magnitude` in decimal. Up to eight digits (every line number, status and count a result line
    /// holds) are gathered into one word, most significant digit in its lowest byte, and appended from it; longer
    /// numbers count their digits first, then write them in place from the last one.
    public static func append(magnitude: UInt64, to out: inout [UInt8]) {
        if magnitude < 100_000_000 {
            var packed: UInt64 = 0
            var count = 0
            var rest = magnitude
            repeat {
                packed = packed &<< 8 | (0x30 &+ rest % 10)
                rest /= 10
                count &+= 1
            } while rest != 0
            for _ in 0..<count {
                out.append(UInt8(truncatingIfNeeded: packed))
                packed &>>= 8
            }
            return
        }
        var digits = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            digits &+= 1
        }
        let start = out.count
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        var span = out.mutableSpan
        var value = magnitude
        var index = start &+ digits &- 1
        while index >= start {
            span[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
            value /= 10
            index &-= 1
        }
    }
}
