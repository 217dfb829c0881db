import APNSCore
import Foundation

extension CampaignReport {
    /// The figures as JSON (`report --json FILE`): what the HTML shows, for scripts and dashboards.
    public func json(generatedAt: Date = Date()) -> [UInt8] {
        var object: [String: Any] = [
            "generated_at": ISO8601DateFormatter().string(from: generatedAt),
            "result_files": resultFiles,
            "summary_files": summaryCount,
            "records": records,
            "outcomes": Dictionary(uniqueKeysWithValues: RecordOutcome.allCases.map { ($0.rawValue, count($0)) }),
            "reasons": reasons.map { ["outcome": $0.outcome.rawValue, "reason": $0.reason, "count": $0.count] },
            "tokens_to_prune": tokensToPrune,
            "replayable": ["retryable": count(.retryable), "in_doubt": count(.inDoubt), "not_sent": count(.notSent)],
            "duplicates": count(.duplicate),
            "attempts": [
                "total": attempts,
                "records_by_attempts": Dictionary(uniqueKeysWithValues: recordsByAttempts.map { (String($0.key), $0.value) }),
            ],
        ]
        var next: [String: Any] = [:]
        if let command = replayCommand() { next["replay"] = command }
        if let command = replayCommandExcludingInDoubt() { next["replay_excluding_in_doubt"] = command }
        if let command = pruneCommand() { next["prune"] = command }
        if !unfinished.isEmpty { next["finish"] = unfinished.map { $0.command ?? "" } }
        object["unfinished"] = unfinished.map(\.resultsPath)
        object["rejected"] = rejected
        object["next_steps"] = next
        if !tornLines.isEmpty { object["torn_lines_skipped"] = tornLines }
        object["runs"] = resultFiles.map { file -> [String: Any] in
            let facts = runs[file] ?? RunFacts()
            var row: [String: Any] = ["results": file, "inputs": facts.inputs, "topics": facts.topics]
            if facts.otherTopicRecords > 0 { row["other_topic_records"] = facts.otherTopicRecords }
            if let command = facts.command { row["command"] = command }
            if let value = facts.startedAt { row["started_at"] = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: value)) }
            if let value = facts.finishedAt { row["finished_at"] = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: value)) }
            if let value = facts.durationSeconds { row["duration_seconds"] = value }
            if let state = facts.state { row["state"] = state.rawValue }
            if let why = facts.stoppedEarly { row["stopped_early"] = why }
            return row
        }
        if let series = series() {
            object["series"] = [
                "bucket_seconds": series.bucketSeconds,
                "started_at": series.startedAt,
                "points": series.points.map { point -> [String: Any] in
                    var row: [String: Any] = [
                        "seconds": point.seconds, "answers_per_second": point.answersPerSecond,
                        "requests_per_second": point.requestsPerSecond,
                    ]
                    if let value = point.latencyP50 { row["latency_p50_seconds"] = value }
                    if let value = point.latencyP99 { row["latency_p99_seconds"] = value }
                    if let value = point.inFlight { row["in_flight"] = value }
                    if let value = point.window { row["window"] = value }
                    return row
                },
                "runs": series.runs.map { run -> [String: Any] in
                    ["label": run.label, "answers_per_second": run.answersPerSecond.map { $0 as Any? ?? NSNull() }]
                },
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return Array(data) + [0x0A]
    }
}
