import APNSCore
import Foundation

/// A campaign's figures, computed from its result lines (one run, or every shard of a split campaign) and the
/// timelines of its summary files: records, outcomes by reason, tokens to prune, what `replay` should send
/// next, duplicates, attempts, and throughput, latency and requests in flight over time. No I/O: lines and
/// timelines are added one by one (the `Reading` section below reads them from files).
public struct CampaignReport: Sendable {
    /// How many records ended with one reason (the APNs reason, or the input error code).
    public struct ReasonCount: Sendable, Equatable {
        /// The outcome the records ended with.
        public var outcome: RecordOutcome
        /// The APNs reason or input error code.
        public var reason: String
        /// Records that ended with this outcome and reason.
        public var count: Int
    }

    /// What one result file holds that `replay` would send again.
    public struct ReplayableCounts: Sendable, Equatable {
        /// Records with a retryable answer (throttled, server errors).
        public var retryable = 0
        /// Records sent whose answer was lost: APNs may or may not have delivered them.
        public var inDoubt = 0
        /// Records never sent (`not_sent`).
        public var notSent = 0
        /// Requests APNs rejected for their topic (BadTopic, TopicDisallowed, MissingTopic): `replay --topic` sends
        /// them again with the right one.
        public var rejectedForTopic = 0
        /// Requests APNs rejected for their push type (InvalidPushType): `replay --push-type` sends them again.
        public var rejectedForPushType = 0
        /// What a plain `replay` sends.
        public var total: Int { retryable + inDoubt + notSent }
        /// What `replay` with the settings fixed sends.
        public var totalWithFixes: Int { total + rejectedForTopic + rejectedForPushType }
    }

    /// What one result file says about its run: the inputs, topics and times from its campaign record
    /// (`<results>.campaign`), the topics from its lines. A file without a record (an older version) has no
    /// inputs or times.
    public struct RunFacts: Sendable, Equatable {
        /// The campaign's inputs (for a replay: the result files it replays).
        public var inputs: [String] = []
        /// The command that ran it: `send` or `replay`.
        public var command: String?
        /// Records by topic, for the first `maximumTopics` topics seen.
        public var topics: [String: Int] = [:]
        /// Records whose topic was not counted: past `maximumTopics` distinct topics.
        public var otherTopicRecords = 0
        /// Seconds since the epoch: when the campaign's first run started, and when its last one finished.
        public var startedAt: Double?
        /// Seconds since the epoch when the campaign's last run finished; nil while unfinished.
        public var finishedAt: Double?
        /// `finished`, `unfinished`, or nil without a campaign record.
        public var state: CampaignManifest.State?
        /// Why a finished campaign stopped early.
        public var stoppedEarly: String?

        /// How many distinct topics a file's facts name; more are counted together.
        public static let maximumTopics = 8

        /// Seconds from the first start to the finish, when both are known.
        public var durationSeconds: Double? {
            guard let startedAt, let finishedAt else { return nil }
            return max(0, finishedAt - startedAt)
        }

        mutating func count(topic: String?) {
            guard let topic else { return }
            if topics[topic] != nil || topics.count < Self.maximumTopics {
                topics[topic, default: 0] += 1
            } else {
                otherTopicRecords += 1
            }
        }

        /// The facts of a campaign record.
        mutating func take(_ manifest: CampaignManifest) {
            inputs = manifest.identity.inputs.map(\.path)
            command = manifest.identity.command
            startedAt = manifest.startedAt
            finishedAt = manifest.finishedAt
            state = manifest.state
            stoppedEarly = manifest.stoppedEarly
        }
    }

    /// The reasons of rejections a replay with `--topic` fixes.
    static let topicReasons: Set<String> = APNSReason.wrongTopicReasons
    /// The reasons of rejections a replay with `--push-type` fixes.
    static let pushTypeReasons: Set<String> = APNSReason.wrongPushTypeReasons
    /// What the printed replay command holds in place of the topic the user must fill in.
    public static let topicPlaceholder = "YOUR_TOPIC"
    /// What the printed replay command holds in place of the push type the user must fill in.
    public static let pushTypePlaceholder = "YOUR_PUSH_TYPE"

    /// The result files, in the order given.
    public private(set) var resultFiles: [String] = []
    /// Result lines read: one per input record.
    public private(set) var records = 0
    /// Records per outcome, for the outcomes that occurred.
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
    /// Result files whose run has not finished (`report` says so and prints the command that finishes each).
    public var unfinished: [UnfinishedRun] = []
    /// Result files whose campaign stopped early: the report proposes each one's own command, the cause fixed, and
    /// leaves their chains out of the replay command (`StoppedRun`).
    public var stopped: [StoppedRun] = []
    /// Requests APNs rejected as bad (`input_error` lines that reached the wire), apart from records found
    /// invalid in the file and never sent.
    public private(set) var rejected = 0
    /// Delivered lines that carry an `apns_unique_id` (development environment), and the first one read.
    public private(set) var deliveredWithUniqueID = 0
    /// The first `apns_unique_id` read; nil when no delivered line carries one.
    public private(set) var firstUniqueID: String?
    /// The course of each run over time, from summary files.
    public private(set) var timelines: [CampaignTimeline] = []
    /// Summary files read.
    public private(set) var summaryCount = 0
    /// Per result file, what its campaign record and lines say about its run.
    public var runs: [String: RunFacts] = [:]
    /// Per result file, the first file of its chain (`ResultChain`: an original and its replays); a file absent
    /// here stands alone.
    public var chainOf: [String: String] = [:]

    /// Up to `PayloadSample.maximum` notifications the campaign sent, for the report's "What was sent": found by
    /// `addResults` in the campaign's input, else taken from result lines that carry their payload.
    public var samples: [PayloadSample] = []

    private var reasonCounts: [String: ReasonCount] = [:]
    /// Per result file, the first delivered records' input lines and topics, to find their payloads in the input.
    private var deliveredLines: [String: [(line: Int, topic: String?)]] = [:]
    /// The first distinct payloads of result lines that carry one.
    private var resultLineSamples: [PayloadSample] = []

    /// An empty report, to add result lines and timelines to.
    public init() {}

    /// Records that ended with `outcome`; 0 when none did.
    public func count(_ outcome: RecordOutcome) -> Int { outcomes[outcome, default: 0] }

    /// Outcomes by reason, most frequent first.
    public var reasons: [ReasonCount] {
        reasonCounts.values.sorted {
            ($0.count, $1.outcome.rawValue, $1.reason) > ($1.count, $0.outcome.rawValue, $0.reason)
        }
    }

    /// Distinct tokens to delete from the token database.
    public var tokensToPrune: Int { prune.entries.count }

    /// Names a result file before its lines are added (files without lines still appear).
    public mutating func addResultFile(_ path: String) {
        if !resultFiles.contains(path) { resultFiles.append(path) }
    }

    /// Adds one result line of `resultFile`.
    public mutating func add(_ record: ResultRecord, resultFile: String) {
        add(record, resultFile: resultFile, fileIndex: nil)
    }

    /// Adds one result line; with `fileIndex` (its file among those `addResults` reads), a token called bad counts
    /// for pruning only once its file has shown its topic confirmed, as `prune` lists it (`PruneList`).
    private mutating func add(_ record: ResultRecord, resultFile: String, fileIndex: Int?) {
        addResultFile(resultFile)
        runs[resultFile, default: RunFacts()].count(topic: record.topic)
        records += 1
        outcomes[record.outcome, default: 0] += 1
        attempts += record.attempts
        recordsByAttempts[record.attempts, default: 0] += 1
        if let reason = record.reason, !reason.isEmpty {
            let key = record.outcome.rawValue + "/" + reason
            reasonCounts[key, default: ReasonCount(outcome: record.outcome, reason: reason, count: 0)].count += 1
        }
        if let fileIndex { prune.add(line: record, file: fileIndex) } else { prune.add(record) }
        if record.outcome == .delivered,
            deliveredLines[resultFile, default: []].count < PayloadSample.deliveredLinesKept
        {
            deliveredLines[resultFile, default: []].append((record.key.line, record.topic))
        }
        if let payload = record.payload, resultLineSamples.count < PayloadSample.maximum {
            let sample = PayloadSample(
                topic: record.topic, payload: PayloadSample.normalized(payload), outcome: record.outcome,
                source: "line \(record.key.line) of the campaign's list")
            PayloadSample.add(sample, to: &resultLineSamples)
            PayloadSample.add(sample, to: &samples)
        }
        if let uniqueID = record.apnsUniqueID, record.outcome == .delivered {
            deliveredWithUniqueID += 1
            if firstUniqueID == nil { firstUniqueID = uniqueID }
        }
        switch record.outcome {
        case .retryable: replayable[resultFile, default: ReplayableCounts()].retryable += 1
        case .inDoubt: replayable[resultFile, default: ReplayableCounts()].inDoubt += 1
        case .notSent: replayable[resultFile, default: ReplayableCounts()].notSent += 1
        case .inputError where record.isRejectedByAPNs:
            rejected += 1
            guard record.status != nil, let reason = record.reason else { break }
            if Self.topicReasons.contains(reason) {
                replayable[resultFile, default: ReplayableCounts()].rejectedForTopic += 1
            }
            if Self.pushTypeReasons.contains(reason) {
                replayable[resultFile, default: ReplayableCounts()].rejectedForPushType += 1
            }
        case .delivered, .prune, .inputError, .duplicate, .expired: break
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

    /// Records to send again: retryable, in doubt and not sent, and requests rejected for a setting `replay` can
    /// fix (the topic, the push type).
    public var replayableTotal: Int { replayable.values.reduce(0) { $0 + $1.totalWithFixes } }

    /// Requests rejected for their topic, over all files.
    public var rejectedForTopic: Int { replayable.values.reduce(0) { $0 + $1.rejectedForTopic } }
    /// Requests rejected for their push type, over all files.
    public var rejectedForPushType: Int { replayable.values.reduce(0) { $0 + $1.rejectedForPushType } }

    /// The words naming where and as whom the campaign sent (`--endpoint`, `--key`, `--key-id`, …, already quoted
    /// for the shell), which the printed replay commands carry so that they run as pasted; the command sets them
    /// from the campaign record (empty: the run took them from the environment).
    public var connectionArguments: [String] = []

    /// The `replay` command that sends again every record that may still be delivered, or nil when none is
    /// left. Where APNs rejected the campaign's topic or push type, it sets the right one (a placeholder the user
    /// fills in), which sends those rejected requests again too. In-doubt records may have arrived already:
    /// `replayCommandExcludingInDoubt` leaves them out. It names every file of each chain with records left (the
    /// original with its replays), so that the replay sees which records a replay already delivered, and writes
    /// to `results`, by default `replayResults`.
    public func replayCommand(results: String? = nil) -> String? {
        replayCommand(results: results ?? replayResults, excludingInDoubt: false)
    }

    /// The `replay` command without in-doubt records; nil when there is nothing else to send or when no record
    /// is in doubt (then `replayCommand` is the same).
    public func replayCommandExcludingInDoubt(results: String? = nil) -> String? {
        guard count(.inDoubt) > 0 else { return nil }
        return replayCommand(results: results ?? replayResults, excludingInDoubt: true)
    }

    /// The result file the printed replay commands write: `replay.ndjson`, or `replay-2.ndjson`, `replay-3.ndjson`
    /// and so on when a result file read has that name (the report of a campaign and its replay proposes the next).
    public var replayResults: String {
        let names = Set(resultFiles.map { ($0 as NSString).lastPathComponent })
        var number = 1
        while true {
            let name = number == 1 ? "replay.ndjson" : "replay-\(number).ndjson"
            if !names.contains(name) { return name }
            number += 1
        }
    }

    private func replayCommand(results: String, excludingInDoubt: Bool) -> String? {
        let stoppedChains = Set(stopped.map { chainOf[$0.resultsPath] ?? $0.resultsPath })
        let left = resultFiles.filter { file in
            guard !stoppedChains.contains(chainOf[file] ?? file), let counts = replayable[file] else { return false }
            return counts.totalWithFixes - (excludingInDoubt ? counts.inDoubt : 0) > 0
        }
        guard !left.isEmpty else { return nil }
        let chains = Set(left.map { chainOf[$0] ?? $0 })
        let files = resultFiles.filter { chains.contains(chainOf[$0] ?? $0) }
        var words = ["apns-bulk", "replay"] + files.map(ShellWord.quoted) + connectionArguments
        if rejectedForTopic > 0 { words += ["--topic", Self.topicPlaceholder] }
        if rejectedForPushType > 0 { words += ["--push-type", Self.pushTypePlaceholder] }
        if excludingInDoubt { words.append("--exclude-in-doubt") }
        return (words + ["--results", ShellWord.quoted(results)]).joined(separator: " ")
    }

    /// The `prune` command that writes the tokens to delete, or nil when there are none.
    public func pruneCommand(output: String = "prune.csv") -> String? {
        guard tokensToPrune > 0 else { return nil }
        return
            (["apns-bulk", "prune"] + resultFiles.map(ShellWord.quoted) + [
                "--format", "csv", "--output", ShellWord.quoted(output),
            ])
            .joined(separator: " ")
    }

    /// The campaign's course over time, all runs together; nil without timelines.
    public func series(maximumPoints: Int = 120) -> ReportSeries? {
        ReportSeries(timelines: timelines, maximumPoints: maximumPoints)
    }
}

// MARK: - JSON

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
                "records_by_attempts": Dictionary(
                    uniqueKeysWithValues: recordsByAttempts.map { (String($0.key), $0.value) }),
            ],
        ]
        var next: [String: Any] = [:]
        if let command = replayCommand() { next["replay"] = command }
        if let command = replayCommandExcludingInDoubt() { next["replay_excluding_in_doubt"] = command }
        if let command = pruneCommand() { next["prune"] = command }
        if !unfinished.isEmpty { next["finish"] = unfinished.map { $0.command ?? "" } }
        if !stopped.isEmpty { next["continue"] = stopped.map { $0.command } }
        object["unfinished"] = unfinished.map(\.resultsPath)
        object["rejected"] = rejected
        object["next_steps"] = next
        if !tornLines.isEmpty { object["torn_lines_skipped"] = tornLines }
        object["runs"] = resultFiles.map { file -> [String: Any] in
            let facts = runs[file] ?? RunFacts()
            var row: [String: Any] = ["results": file, "inputs": facts.inputs, "topics": facts.topics]
            if facts.otherTopicRecords > 0 { row["other_topic_records"] = facts.otherTopicRecords }
            if let command = facts.command { row["command"] = command }
            if let value = facts.startedAt {
                row["started_at"] = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: value))
            }
            if let value = facts.finishedAt {
                row["finished_at"] = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: value))
            }
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
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return Array(data) + [0x0A]
    }
}

// MARK: - Reading

extension CampaignReport {
    /// Adds the result files of a campaign (NDJSON or CSV, plain or gzip): a run, its shards, its replays. Of a
    /// record's lines in an original and its replays, only the one that stands (`ResultChain`) is counted.
    public mutating func addResults(atPaths paths: [String]) throws(PipelineError) {
        for path in paths {
            addResultFile(path)
            if let manifest = try? CampaignManifest.read(forResults: path) {
                runs[path, default: RunFacts()].take(manifest)
            }
        }
        let (chain, torn) = try ResultChain.forEachStandingLine(resultPaths: paths) { record, file in
            add(record, resultFile: paths[file], fileIndex: file)
        }
        prune.addWaitingLines()
        tornLines += torn
        findSamples()
        for (file, path) in paths.enumerated() {
            chainOf[path] = paths[chain.chain[file]]
            if let run = UnfinishedRun.find(resultsPath: path) { unfinished.append(run) }
        }
    }

    /// The samples of what was sent: the payloads of the first delivered records of each `send` run with one input
    /// (read from that input, as given or beside the result file), then those of result lines that carry one.
    private mutating func findSamples() {
        var found: [PayloadSample] = []
        for file in resultFiles {
            guard found.count < PayloadSample.maximum, let facts = runs[file], facts.command == "send",
                facts.inputs.count == 1, let lines = deliveredLines[file]
            else { continue }
            let input = facts.inputs[0]
            var candidates = [input]
            if !input.hasPrefix("/") {
                candidates.append(
                    ((file as NSString).deletingLastPathComponent as NSString).appendingPathComponent(input))
            }
            guard let path = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else { continue }
            for sample in PayloadSample.fromInput(path: path, lines: lines) { PayloadSample.add(sample, to: &found) }
        }
        for sample in resultLineSamples { PayloadSample.add(sample, to: &found) }
        samples = found
    }

    /// Adds the timeline of a `send --summary` file; a summary without one (an older version) is counted only.
    public mutating func addSummary(atPath path: String) throws(PipelineError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw PipelineError(.openFailed, "\(path): \(error.localizedDescription)")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw PipelineError(.inputsInvalid, "\(path): not a summary JSON file: \(error.localizedDescription)")
        }
        guard let summary = object as? [String: Any] else {
            throw PipelineError(.inputsInvalid, "\(path): not a summary JSON file (no object at the top)")
        }
        countSummary()
        if let value = summary[CampaignTimeline.summaryKey], var timeline = CampaignTimeline(jsonObject: value) {
            if timeline.label == nil { timeline.label = (path as NSString).lastPathComponent }
            add(timeline)
        }
    }
}

// MARK: - ReportFile

/// Writes a run's report files (`--summary`) whole, created with mode 0600 (less if the umask says
/// so), like the result file and journal: they name the campaign and its figures.
public enum ReportFile {
    /// Replaces the file at `path` with `bytes`; throws when it cannot be created or written.
    public static func write(_ bytes: [UInt8], to path: String) throws(PipelineError) {
        let file = try POSIXFile.openForReplacing(path)
        try file.write(bytes, count: bytes.count)
    }
}

// MARK: - ShellWord

/// Quotes a word for a POSIX shell when it needs it, so a printed command can be pasted as it stands.
public enum ShellWord {
    /// The word as is when it is plain, else single-quoted with its quotes escaped.
    public static func quoted(_ word: String) -> String {
        if !word.isEmpty, word.unicodeScalars.allSatisfy(isPlain) { return word }
        return "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: #"'\''"#) + "'"
    }

    private static func isPlain(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", "/", ":", "=", "+", ",", "@", "%": return true
        default: return false
        }
    }
}
