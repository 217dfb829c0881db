/// A length of time as people write it on a command line or in a campaign column: `90s`, `30m`, `24h`, `7d`, or
/// groups of them largest unit first (`1h30m`, `2d12h`). The one reader of durations: `--expiration` and the
/// `expiration` member read relative times with it, `--not-after` its "after the campaign's first start" form.
///
/// Digits alone are not a duration (they are epoch seconds where both are accepted), and neither is a zero length.
public struct DurationText: Hashable, Sendable, CustomStringConvertible {
    /// The longest duration read: ten years, far beyond anything APNs keeps (about 30 days) and far inside `Int64`.
    public static let maximumSeconds: Int64 = 10 * 366 * 86_400

    /// The length, in whole seconds (at least 1).
    public let seconds: Int64

    /// The length in the fewest groups of the largest units: `1h30m` for 5,400 seconds.
    public var description: String {
        var rest = seconds
        var text = ""
        for (unit, size) in Self.units {
            guard rest >= size else { continue }
            text += "\(rest / size)\(Character(Unicode.Scalar(unit)))"
            rest %= size
        }
        return text
    }

    private static let units: [(UInt8, Int64)] = [
        (UInt8(ascii: "d"), 86_400), (UInt8(ascii: "h"), 3_600), (UInt8(ascii: "m"), 60), (UInt8(ascii: "s"), 1),
    ]

    /// A duration of `seconds` (1 up to `maximumSeconds`), nil outside.
    public init?(seconds: Int64) {
        guard seconds >= 1, seconds <= Self.maximumSeconds else { return nil }
        self.seconds = seconds
    }

    /// Reads `text`; nil when it is not one or more `<digits><unit>` groups (units `d`, `h`, `m`, `s`, each at most
    /// once, largest first), or when the total is zero or longer than `maximumSeconds`.
    public init?(parsing text: some StringProtocol) {
        var total: Int64 = 0
        var number: Int64 = 0
        var digits = 0
        var nextUnit = 0  // index into `units`: each unit after the ones already used
        for byte in text.utf8 {
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                guard digits < 12 else { return nil }
                number = number * 10 + Int64(byte &- UInt8(ascii: "0"))
                digits += 1
                continue
            }
            guard digits > 0, let index = Self.units[nextUnit...].firstIndex(where: { $0.0 == byte }) else {
                return nil
            }
            total += number * Self.units[index].1
            guard total <= Self.maximumSeconds else { return nil }
            nextUnit = index + 1
            number = 0
            digits = 0
        }
        guard digits == 0, nextUnit > 0 else { return nil }  // trailing digits without a unit, or nothing at all
        self.init(seconds: total)
    }
}
