import APNSCore
import Foundation

/// The words of the report's part for the people who ordered the campaign: what each outcome means in plain words,
/// and times in the reader's zone beside UTC. The technical section keeps the tool's names (docs/RUNNING.md,
/// "The report").
enum ReportWording {
    /// The outcomes in the order the people's part lists them: accepted first, then what can still be done.
    static let plainOrder: [RecordOutcome] = [
        .delivered, .prune, .retryable, .inDoubt, .notSent, .expired, .inputError, .duplicate,
    ]

    static func plainLabel(_ outcome: RecordOutcome) -> String {
        switch outcome {
        case .delivered: return "Accepted by Apple"
        case .prune: return "Devices no longer reachable (app removed, or the phone no longer registered)"
        case .retryable: return "Not accepted yet, can be sent again"
        case .inDoubt: return "Answer lost: may have arrived"
        case .inputError: return "Not sendable: problem in the campaign data"
        case .duplicate: return "Duplicate entries skipped"
        case .notSent: return "Not sent (campaign stopped)"
        case .expired: return "Not sent: past the campaign's deadline"
        }
    }

    /// `2026-12-02 17:04 CET (16:04 UTC)`; the UTC date too when it differs from the local one; only
    /// `2026-12-02 16:04 UTC` when the zone is UTC at that time. A zone without an abbreviation (or only `GMT+1`)
    /// is named by its offset, `UTC+01:00`.
    static func time(_ date: Date, in zone: TimeZone) -> String {
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? zone
        let offset = zone.secondsFromGMT(for: date)
        guard offset != 0 else { return format(date, "yyyy-MM-dd HH:mm", utc) + " UTC" }
        let local = format(date, "yyyy-MM-dd HH:mm", zone)
        let sameDay = format(date, "yyyy-MM-dd", zone) == format(date, "yyyy-MM-dd", utc)
        let inUTC = format(date, sameDay ? "HH:mm" : "yyyy-MM-dd HH:mm", utc)
        return "\(local) \(zoneName(zone, at: date)) (\(inUTC) UTC)"
    }

    /// The zone's abbreviation (`CET`, `PST`), or its offset from UTC (`UTC+05:30`).
    static func zoneName(_ zone: TimeZone, at date: Date) -> String {
        if let abbreviation = zone.abbreviation(for: date), !abbreviation.isEmpty,
            !abbreviation.hasPrefix("GMT"), !abbreviation.hasPrefix("UTC"), !abbreviation.hasPrefix("+"),
            !abbreviation.hasPrefix("-")
        {
            return abbreviation
        }
        let offset = zone.secondsFromGMT(for: date)
        let minutes = abs(offset) / 60
        return "UTC" + (offset < 0 ? "-" : "+") + String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    private static func format(_ date: Date, _ pattern: String, _ zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
}
