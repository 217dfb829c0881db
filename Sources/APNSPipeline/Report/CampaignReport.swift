import APNSCore

/// A campaign's figures, computed from its result lines (one run, or every shard of a split campaign) and the
/// timelines of its summary files: records, outcomes by reason, tokens to prune, what `replay` should send
/// next, duplicates, attempts, and throughput, latency and requests in flight over time. No I/O: lines and
/// timelines are added one by one (`CampaignReport+Reading.swift` reads them from files).
public struct CampaignReport: Sendable {
    /// How many records ended with one reason (the APNs reason, or the input error code).
    public struct ReasonCount: Sendable, Equatable {
        public var outcome: RecordOutcome
        public var reason: String
        public var count: Int
    }

    /// What one result file holds that `replay` would send again.
    public struct ReplayableCounts: Sendable, Equatable {
        public var retryable = 0
        public var inDoubt = 0
        public var notSent = 0
        public var total: Int { retryable + inDoubt + notSent }
    }

    /// The result files, in the order given.
    public private(set) var resultFiles: [String] = []
    /// Result lines read: one per input record.
    public private(set) var records = 0
    public private(set) var outcomes: [RecordOutcome: Int] = [:]
    /// Requests that reached the wire, over all records.
    public private(set) var attempts = 0
    /// Records by how many requests they took (0: never sent).
    public private(set) var recordsByAttempts: [Int: Int] = [:]
    /// The tokens to delete, deduplicated across files.
    public private(set) var prune = PruneList()
    /// Per result file, the records `replay` would send again.
    public private(set) var replayable: [String: ReplayableCounts] = [:]
    /// Torn last lines skipped while reading, as `file:line`.
    public var tornLines: [String] = []
    /// The course of each run over time, from summary files.
    public private(set) var timelines: [CampaignTimeline] = []
    /// Summary files read.
    public private(set) var summaryCount = 0

    private var reasonCounts: [String: ReasonCount] = [:]

    public init() {}

    public func count(_ outcome: RecordOutcome) -> Int { outcomes[outcome, default: 0] }

    /// Outcomes by reason, most frequent first.
    public var reasons: [ReasonCount] {
        reasonCounts.values.sorted { ($0.count, $1.outcome.rawValue, $1.reason) > ($1.count, $0.outcome.rawValue, $0.reason) }
    }

    /// Distinct tokens to delete from the token database.
    public var tokensToPrune: Int { prune.entries.count }

    /// Names a result file before its lines are added (files without lines still appear).
    public mutating func addResultFile(_ path: String) {
        if !resultFiles.contains(path) { resultFiles.append(path) }
    }

    /// Adds one result line of `resultFile`.
    public mutating func add(_ record: ResultRecord, resultFile: String) {
        addResultFile(resultFile)
        records += 1
        outcomes[record.outcome, default: 0] += 1
        attempts += record.attempts
        recordsByAttempts[record.attempts, default: 0] += 1
        if let reason = record.reason, !reason.isEmpty {
            let key = record.outcome.rawValue + "/" + reason
            reasonCounts[key, default: ReasonCount(outcome: record.outcome, reason: reason, count: 0)].count += 1
        }
        prune.add(record)
        switch record.outcome {
        case .retryable: replayable[resultFile, default: ReplayableCounts()].retryable += 1
        case .inDoubt: replayable[resultFile, default: ReplayableCounts()].inDoubt += 1
        case .notSent: replayable[resultFile, default: ReplayableCounts()].notSent += 1
        case .delivered, .prune, .inputError, .duplicate: break
        }
    }

    /// Adds the timeline of one run (a shard's summary file).
    public mutating func add(_ timeline: CampaignTimeline) {
        timelines.append(timeline)
    }

    /// Counts a summary file read (with or without a timeline).
    public mutating func countSummary() {
        summaryCount += 1
    }

    /// Records to send again: retryable, in doubt and not sent.
    public var replayableTotal: Int { count(.retryable) + count(.inDoubt) + count(.notSent) }

    /// The `replay` command that sends again every record that may still be delivered, or nil when none is
    /// left. In-doubt records may have arrived already: `replayCommandExcludingInDoubt` leaves them out.
    public func replayCommand(results: String = "replay.ndjson") -> String? {
        let files = resultFiles.filter { (replayable[$0]?.total ?? 0) > 0 }
        guard !files.isEmpty else { return nil }
        return (["apns-bulk", "replay"] + files.map(ShellWord.quoted) + ["--results", ShellWord.quoted(results)])
            .joined(separator: " ")
    }

    /// The `replay` command for retryable and not-sent records only; nil when there are none or when no record
    /// is in doubt (then `replayCommand` is the same).
    public func replayCommandExcludingInDoubt(results: String = "replay.ndjson") -> String? {
        guard count(.inDoubt) > 0 else { return nil }
        let files = resultFiles.filter { file in replayable[file].map { $0.retryable + $0.notSent > 0 } ?? false }
        guard !files.isEmpty else { return nil }
        return (["apns-bulk", "replay"] + files.map(ShellWord.quoted)
                + ["--exclude-in-doubt", "--results", ShellWord.quoted(results)]).joined(separator: " ")
    }

    /// The `prune` command that writes the tokens to delete, or nil when there are none.
    public func pruneCommand(output: String = "prune.csv") -> String? {
        guard tokensToPrune > 0 else { return nil }
        return (["apns-bulk", "prune"] + resultFiles.map(ShellWord.quoted) + ["--format", "csv", "--output", ShellWord.quoted(output)])
            .joined(separator: " ")
    }

    /// The campaign's course over time, all runs together; nil without timelines.
    public func series(maximumPoints: Int = 120) -> ReportSeries? {
        ReportSeries(timelines: timelines, maximumPoints: maximumPoints)
    }
}
