import APNSCore

/// The (token, topic) pairs that earlier result files of a campaign (`send --skip-delivered`) already answer for:
/// each pair with a `delivered`, `in_doubt` or `prune` line, and the file and line of its first such line. A run
/// that skips them sends only the records that have none (the ones fixed in the input since, and those that ended
/// invalid, retryable or not sent), and gives each skipped record a `duplicate` line naming the earlier one.
///
/// Exact: a pair is looked up by its token and topic texts as the result lines hold them (the token in its stored
/// form, lowercase hex), never by a hash alone. Memory: a dictionary of the two texts, of the order of 150 bytes a pair.
public struct EarlierDeliveries: Sendable {
    /// The result files, as given.
    public let paths: [String]
    /// Pair key (`key(token:topic:)`) to where its line is: file index, line, outcome.
    private var places: [String: Place] = [:]

    private struct Place: Sendable {
        let file: Int
        let line: Int
        let outcome: RecordOutcome
    }

    /// Pairs recorded.
    public var count: Int { places.count }

    /// Reads each result file whole; a file that is missing, unreadable or has a damaged line throws (a torn last
    /// line is skipped, as `replay` skips it), and so does one whose run is unfinished (a journal beside it): its
    /// requests in flight have no line yet, and would be sent again.
    public init(paths: [String]) throws(PipelineError) {
        self.paths = paths
        for (file, path) in paths.enumerated() {
            if (POSIXFile.regularFileSize(atPath: SendJournal.path(forResults: path)) ?? 0) > 0 {
                throw PipelineError(
                    .unfinishedRun,
                    "--skip-delivered \(path): its run is unfinished (\(SendJournal.path(forResults: path)) "
                        + "exists), so the records it had in flight have no line yet: finish it first (run its command again)"
                )
            }
            let reader = try ResultReader(path: path)
            while let record = try reader.next() {
                guard Self.answersFor(record.outcome), let token = record.token, let topic = record.topic else {
                    continue
                }
                let key = Self.key(token: token, topic: topic)
                if places[key] == nil {
                    places[key] = Place(file: file, line: reader.lineNumber, outcome: record.outcome)
                }
            }
        }
    }

    /// Whether a line of this outcome means the pair must not be sent again: delivered, perhaps delivered (in
    /// doubt), or a dead token (prune).
    static func answersFor(_ outcome: RecordOutcome) -> Bool {
        outcome == .delivered || outcome == .inDoubt || outcome == .prune
    }

    /// The `duplicate` line's detail for a notification whose pair an earlier file answers for; nil when none does.
    public func detail(for notification: PushNotification) -> String? {
        guard let place = places[Self.key(token: notification.token.hex, topic: notification.topic.value)] else {
            return nil
        }
        let why: String
        switch place.outcome {
        case .inDoubt: why = "in doubt (perhaps delivered)"
        case .prune: why = "pruned (a dead token)"
        default: why = "delivered"
        }
        return "\(why) before: \(paths[place.file]) line \(place.line) (--skip-delivered)"
    }

    private static func key(token: String, topic: String) -> String { token + "\u{0}" + topic }
}
