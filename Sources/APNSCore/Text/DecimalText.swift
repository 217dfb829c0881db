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

    /// Appends `magnitude` in decimal. A single digit goes in as it is; longer numbers by chunks of up to eight,
    /// each gathered into one word (most significant digit in its lowest byte) and appended from it; a number of
    /// nine digits or more writes its leading part first, then each lower chunk of eight padded with zeros.
    public static func append(magnitude: UInt64, to out: inout [UInt8]) {
        if magnitude < 10 {
            out.append(0x30 &+ UInt8(truncatingIfNeeded: magnitude))  // a file index, an attempt count: one digit
        } else if magnitude >= 100_000_000 {
            append(magnitude: magnitude / 100_000_000, to: &out)
            appendChunk(magnitude % 100_000_000, minimumDigits: 8, to: &out)
        } else {
            appendChunk(magnitude, minimumDigits: 1, to: &out)
        }
    }

    /// Appends `chunk` (below 10^8) with at least `minimumDigits` digits, leading zeros added.
    private static func appendChunk(_ chunk: UInt64, minimumDigits: Int, to out: inout [UInt8]) {
        var packed: UInt64 = 0
        var count = 0
        var rest = chunk
        repeat {
            packed = packed &<< 8 | (0x30 &+ rest % 10)
            rest /= 10
            count &+= 1
        } while rest != 0 || count < minimumDigits
        for _ in 0..<count {
            out.append(UInt8(truncatingIfNeeded: packed))
            packed &>>= 8
        }
    }
}
