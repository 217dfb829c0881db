/// The final outcome of one campaign record, as written in the `outcome` field of its result line.
public enum RecordOutcome: String, Sendable, CaseIterable, Hashable {
    /// APNs accepted the notification (200).
    case delivered
    /// The token is dead or wrong for the app (410, BadDeviceToken, DeviceTokenNotForTopic): delete it.
    case prune
    /// Not delivered, and sending again later may work (429, 5xx, retries exhausted).
    case retryable
    /// The record itself is wrong: invalid in the file, or rejected by APNs as a bad request.
    case inputError = "input_error"
    /// A later copy of a (token, topic) pair already sent in this run.
    case duplicate
    /// Never sent because the campaign stopped early (bad credentials, a misconfigured campaign, Ctrl-C).
    case notSent = "not_sent"
    /// Sent, but its answer was lost (GOAWAY, dropped connection, timeout, crash): it may have been delivered.
    case inDoubt = "in_doubt"
    /// Never sent because the campaign's `--not-after` deadline passed first: too late to be worth sending.
    /// Not replayed by default (docs/RUNNING-AGAIN.md, "The deadline").
    case expired

    /// Hashes the case, not its raw value: the standard library's default for a raw-valued enum hashes the raw
    /// String, and the dispatcher counts every record's outcome in a dictionary.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(caseIndex)
    }

    /// Whether both are the same outcome.
    public static func == (lhs: RecordOutcome, rhs: RecordOutcome) -> Bool {
        lhs.caseIndex == rhs.caseIndex
    }

    /// The case's position in `allCases` (0 to 7), for tables indexed by outcome.
    public var caseIndex: Int {
        switch self {
        case .delivered: return 0
        case .prune: return 1
        case .retryable: return 2
        case .inputError: return 3
        case .duplicate: return 4
        case .notSent: return 5
        case .inDoubt: return 6
        case .expired: return 7
        }
    }

    /// Whether `replay` sends this record again by default.
    public var isReplayable: Bool {
        switch self {
        case .retryable, .notSent, .inDoubt: return true
        case .delivered, .prune, .inputError, .duplicate, .expired: return false
        }
    }
}
