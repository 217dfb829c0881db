import APNSCore
import Foundation

/// The `--not-after` value as given: an ISO-8601 instant (`2026-12-02T18:00:00Z`, an offset allowed), or a
/// duration (`DurationText`: `6h`, `1h30m`) counted from the campaign's first start. `SendRun` resolves it against
/// the campaign record's `startedAt` and records the instant there (docs/RUNNING-AGAIN.md, "The deadline").
public enum NotAfter: Sendable, Equatable {
    /// An instant, in seconds since the epoch.
    case instant(Double)
    /// A length of time after the campaign's first start.
    case afterFirstStart(DurationText)

    /// Reads `text`; nil when it is neither a duration nor an ISO-8601 instant with a time zone.
    public init?(parsing text: String) {
        if let duration = DurationText(parsing: text) {
            self = .afterFirstStart(duration)
            return
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) {
            self = .instant(date.timeIntervalSince1970)
            return
        }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = formatter.date(from: text) else { return nil }
        self = .instant(date.timeIntervalSince1970)
    }

    /// The deadline, in seconds since the epoch, for a campaign first started at `firstStart`.
    public func deadline(firstStart: Double) -> Double {
        switch self {
        case .instant(let at): return at
        case .afterFirstStart(let duration): return firstStart + Double(duration.seconds)
        }
    }

    /// `at` (seconds since the epoch) as result lines and the summary name it: ISO-8601 in UTC, to the second.
    public static func text(_ at: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: at.rounded(.down)))
    }
}
