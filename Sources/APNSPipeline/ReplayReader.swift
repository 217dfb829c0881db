import APNSCore

/// Reads result files of earlier runs and hands out the records to send again (`replay`): by default those that
/// ended `retryable`, `not_sent` or `in_doubt` (`RecordOutcome.isReplayable`), rebuilt from the line alone.
///
/// A record's `source` is the result file's index in `paths` and its `line` is the line in that result file, so
/// a replay run's own results and journal key records the same way a campaign run does (and `send --resume`
/// works for replays). `lastResult` is the result line a record came from (its original campaign file and line).
/// A line that cannot be rebuilt (no payload, a token that no longer parses) comes back as an invalid record.
public final class ReplayReader {
    public let paths: [String]
    public let outcomes: Set<RecordOutcome>
    /// Torn last lines skipped, as `file:line`.
    public private(set) var tornLines: [String] = []
    /// The result line the last returned record was rebuilt from.
    public private(set) var lastResult: ResultRecord?

    private var nextPath = 0
    private var reader: ResultReader?

    public init(paths: [String], outcomes: Set<RecordOutcome> = Set(RecordOutcome.allCases.filter(\.isReplayable))) {
        self.paths = paths
        self.outcomes = outcomes
    }

    /// The next record to send again, or nil when every file is read.
    public func next() throws(PipelineError) -> CampaignRecord? {
        while true {
            guard let reader else {
                guard nextPath < paths.count else { return nil }
                reader = try ResultReader(path: paths[nextPath])
                nextPath += 1
                continue
            }
            guard let result = try reader.next() else {
                if let torn = reader.tornLine { tornLines.append("\(reader.name):\(torn)") }
                self.reader = nil
                continue
            }
            guard outcomes.contains(result.outcome) else { continue }
            lastResult = result
            let source = nextPath - 1
            do {
                let notification = try result.replayNotification()
                return CampaignRecord(source: source, line: reader.lineNumber, content: .notification(notification))
            } catch {
                return CampaignRecord(
                    source: source, line: reader.lineNumber, content: .invalid(error), tokenText: result.token, topicText: result.topic
                )
            }
        }
    }
}
