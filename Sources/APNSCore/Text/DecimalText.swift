/// Writes integers as decimal ASCII digits into byte buffers (result lines, the send journal, HTTP/2 header
/// values): the one integer writer, no `String` made on the way.
public enum DecimalText {
    /// Appends `value` in decimal, with a leading `-` when it is negative.
    public static func append<T: BinaryInteger>(_ value: T, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = UInt64(value.magnitude)
        if magnitude == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        let start = out.count
        while magnitude > 0 {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        }
        out[start...].reverse()
    }
}
