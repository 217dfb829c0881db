import Foundation

/// Times as APNs gives them (milliseconds since the epoch) and as people write them (ISO 8601): `prune`'s
/// `timestamp_iso` column and its `--after` cutoff.
public enum MillisecondTime {
    /// `2026-01-01T00:00:00.000Z` for 1767225600000: UTC, to the millisecond.
    public static func iso8601(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// Milliseconds since the epoch from `text`: digits (milliseconds, as APNs's timestamps), an ISO 8601 date
    /// (`2026-01-01`, midnight UTC) or time with a zone (`2026-01-01T08:00:00Z`, `…T08:00:00.250+02:00`); nil for
    /// anything else.
    public static func parse(_ text: String) -> Int64? {
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Int64(text)
        }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        let layouts: [ISO8601DateFormatter.Options] = [
            [.withInternetDateTime, .withFractionalSeconds], [.withInternetDateTime],
            [.withFullDate, .withDashSeparatorInDate],
        ]
        for layout in layouts {
            // A date alone is ten characters: a time without a zone is refused, not read as its day.
            if layout.contains(.withFullDate), !layout.contains(.withInternetDateTime), text.utf8.count != 10 {
                continue
            }
            formatter.formatOptions = layout
            if let date = formatter.date(from: text) {
                let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
                guard milliseconds.magnitude < 9.0e15 else { return nil }
                return Int64(milliseconds)
            }
        }
        return nil
    }
}
