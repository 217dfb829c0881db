/// Checks UTF-8 the way JSON needs it (no overlong forms, no surrogates, nothing above U+10FFFF): for strings
/// inside JSON, CSV fields, and finding where a line stops being valid UTF-8.
public enum UTF8Validation {
    /// The offset of the first byte that starts an invalid sequence in `bytes[range]`, or nil if all is valid.
    public static func firstInvalidByte(_ bytes: [UInt8], in range: Range<Int>) -> Int? {
        var index = range.lowerBound
        while index < range.upperBound {
            if bytes[index] < 0x80 {
                index += 1
                continue
            }
            let length = sequenceLength(bytes, at: index, end: range.upperBound)
            if length == 0 { return index }
            index += length
        }
        return nil
    }

    /// The length of the valid multi-byte sequence starting at `index`, or 0 if it is invalid or truncated.
    public static func sequenceLength(_ bytes: [UInt8], at index: Int, end: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        var lowest: UInt8 = 0x80
        var highest: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lowest = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            highest = 0x9F
        case 0xF0:
            length = 4
            lowest = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            highest = 0x8F
        default: return 0
        }
        guard index + length <= end else { return 0 }
        let second = bytes[index + 1]
        guard second >= lowest, second <= highest else { return 0 }
        for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return 0 }
        return length
    }
}
