import APNSCore

/// The tokens to delete from a token database, from result files: every record whose outcome is `prune`
/// (410 `Unregistered`/`ExpiredToken` with APNs's timestamp, `BadDeviceToken`, `DeviceTokenNotForTopic`),
/// one entry per token, topic and environment across all files, in the order first seen. Each entry says where
/// it comes from: topic, environment (from the campaign record beside its result file), the input file it was
/// read from (`campaign`) and its result file.
///
/// Only what APNs confirmed is listed. A 410 always is. A token called bad (`BadDeviceToken`,
/// `DeviceTokenNotForTopic`, no timestamp) is listed only when its own result file also holds a token of the same
/// topic answered 200 or 410 (so that endpoint, that environment and that topic were right), and its line does not
/// say `unconfirmed:` (`TokenRejectionCheck`); the others are held back (`heldBack`), or listed with
/// `includeUnconfirmed`.
///
/// When an entry appears more than once: one without a timestamp (the token is always dead) wins; otherwise the
/// latest timestamp wins.
///
/// `entries(after:)` keeps 410 entries whose timestamp is strictly after the cutoff (a token registered again
/// after APNs's timestamp is still good, so old 410s may be stale). Entries without a timestamp always pass:
/// a token APNs calls bad is dead whenever it was seen.
public struct PruneList: Sendable {
    /// One token to delete.
    public struct Entry: Hashable, Sendable {
        /// The token, lowercase hex.
        public var token: String
        /// The APNs reason (`Unregistered`, `ExpiredToken`, `BadDeviceToken`, `DeviceTokenNotForTopic`).
        public var reason: String
        /// For 410s: milliseconds since the epoch at which APNs last saw the token invalid.
        public var timestamp: Int64?
        /// The topic the token was sent to.
        public var topic: String
        /// `production`, `development`, or the host of another endpoint; empty when the result file has no
        /// campaign record that says.
        public var environment: String
        /// The input file the record was read from.
        public var campaign: String
        /// The result file the line was read from.
        public var results: String
        /// The record's `--keep` values, from its result line; nil when its run kept none.
        public var kept: KeptValues?

        /// An entry from its parts.
        public init(
            token: String, reason: String, timestamp: Int64?, topic: String = "", environment: String = "",
            campaign: String = "", results: String = "", kept: KeptValues? = nil
        ) {
            self.kept = kept
            self.token = token
            self.reason = reason
            self.timestamp = timestamp
            self.topic = topic
            self.environment = environment
            self.campaign = campaign
            self.results = results
        }
    }

    /// How the list is written.
    public enum OutputFormat: String, Sendable, CaseIterable {
        /// One token per line.
        case text
        /// `csvHeader`'s columns with a header row.
        case csv
        /// One JSON object per line, members named as the CSV columns (an empty value left out).
        case ndjson
    }

    /// The CSV columns, in order: the first three as apns-bulk always wrote them, then where each row comes from.
    public static let csvHeader = "token,reason,timestamp,topic,environment,timestamp_iso,campaign,results"

    /// The tokens to delete, one entry each.
    public private(set) var entries: [Entry] = []
    private var positionByKey: [String: Int] = [:]
    /// Topics answered 200 or 410 in a result file, as "file index, topic" (`add(line:file:source:)`).
    private var confirmedTopics: Set<String> = []
    /// Tokens called bad, waiting for the end of their files to know whether their topic was confirmed.
    private var waiting: [(record: ResultRecord, source: Entry, file: Int)] = []
    /// Torn last lines skipped while reading files, as `file:line`.
    public private(set) var tornLines: [String] = []
    /// List tokens called bad in a run that did not confirm their topic and environment too.
    public var includeUnconfirmed = false

    /// An empty list.
    public init() {}

    /// Tokens called bad (`BadDeviceToken`, `DeviceTokenNotForTopic`) whose result file holds no token of their
    /// topic answered 200 or 410, or whose run said so (`unconfirmed:`): not listed, since the endpoint (the
    /// environment) or the topic may have been wrong rather than the tokens. Listed too with `includeUnconfirmed`.
    public private(set) var heldBack = 0

    /// Adds a result if its outcome is `prune` and its topic was confirmed in its run (`confirmed`: by another
    /// line of its result file; a record on its own can only say it was not).
    public mutating func add(
        _ record: ResultRecord, from source: Entry = Entry(token: "", reason: "", timestamp: nil),
        confirmed: Bool = true
    ) {
        guard record.outcome == .prune, let token = record.token, !token.isEmpty else { return }
        let untimed = record.timestamp == nil && record.status != 410
        if untimed, !confirmed || record.detail?.hasPrefix(TokenRejectionCheck.unconfirmedPrefix) == true {
            heldBack += 1
            guard includeUnconfirmed else { return }
        }
        var entry = source
        entry.token = token
        entry.reason = record.reason ?? ""
        entry.timestamp = record.timestamp
        entry.topic = record.topic ?? ""
        entry.kept = record.kept
        let key = entry.token + " " + entry.topic + " " + entry.environment
        guard let position = positionByKey[key] else {
            positionByKey[key] = entries.count
            entries.append(entry)
            return
        }
        let kept = entries[position]
        switch (kept.timestamp, entry.timestamp) {
        case (nil, _): return
        case (_?, nil): entries[position] = entry
        case (let old?, let new?): if new > old { entries[position] = entry }
        }
    }

    /// Adds every `prune` result of a result file.
    public mutating func add(resultsAt path: String) throws(PipelineError) {
        try add(resultsAt: [path])
    }

    /// Adds every `prune` result of a campaign's result files (a run, its shards, its replays): of a record's lines
    /// in an original and its replays, only the one that stands (`ResultChain`), so a token a later replay
    /// delivered to is not listed. Tokens called bad wait for the end of their file: a 200 or 410 of their topic
    /// anywhere in it confirms them.
    public mutating func add(resultsAt paths: [String]) throws(PipelineError) {
        let environments = paths.map { path in (try? CampaignManifest.read(forResults: path))?.environment ?? "" }
        let (_, torn) = try ResultChain.forEachStandingLine(resultPaths: paths) { record, file, inputs in
            guard record.outcome == .prune || record.outcome == .delivered || record.status == 410 else { return }
            add(
                line: record, file: file,
                source: Entry(
                    token: "", reason: "", timestamp: nil, environment: environments[file],
                    campaign: record.key.fileIndex < inputs.paths.count ? inputs.path(at: record.key.fileIndex) : "",
                    results: paths[file]))
        }
        addWaitingLines()
        tornLines += torn
    }

    /// Adds one standing line of result file `file` (of a chain read line by line, as `report` does): a 200 or 410
    /// confirms its topic in that file; a token called bad waits for `addWaitingLines`, after the last line.
    public mutating func add(
        line record: ResultRecord, file: Int, source: Entry = Entry(token: "", reason: "", timestamp: nil)
    ) {
        if record.outcome == .delivered || record.status == 410 {
            confirmedTopics.insert("\(file) \(record.topic ?? "")")
        }
        guard record.outcome == .prune else { return }
        if record.timestamp == nil && record.status != 410 {
            waiting.append((record, source, file))
        } else {
            add(record, from: source)
        }
    }

    /// Adds the tokens called bad that `add(line:file:source:)` kept waiting, each listed only if its topic was
    /// confirmed in its file.
    public mutating func addWaitingLines() {
        for line in waiting {
            add(
                line.record, from: line.source,
                confirmed: confirmedTopics.contains("\(line.file) \(line.record.topic ?? "")"))
        }
        waiting = []
    }

    /// The entries that pass the cutoff (milliseconds since the epoch); nil keeps all.
    public func entries(after cutoff: Int64?) -> [Entry] {
        guard let cutoff else { return entries }
        return entries.filter { entry in entry.timestamp.map { $0 > cutoff } ?? true }
    }

    /// The kept fields of the entries, each once, in the order first seen: the CSV's columns after `csvHeader`'s.
    public static func keptNames(of entries: [Entry]) -> [String] {
        var names: [String] = []
        var seen: Set<String> = []
        for entry in entries {
            for name in entry.kept?.names ?? [] where seen.insert(name).inserted { names.append(name) }
        }
        return names
    }

    /// Writes entries in a format. CSV and NDJSON rows carry the kept fields after the other columns (in CSV a
    /// column for each kept field of any entry, empty where an entry has none; in NDJSON a member for each of the
    /// entry's own, named as the field); the text format stays one token a line.
    public static func write(_ entries: [Entry], format: OutputFormat, to sink: any ByteSink) throws(PipelineError) {
        var out: [UInt8] = []
        out.reserveCapacity(64 * 1024)
        let keptNames = format == .csv ? keptNames(of: entries) : []
        if format == .csv { out.append(contentsOf: (([csvHeader] + keptNames).joined(separator: ",") + "\n").utf8) }
        for entry in entries {
            let iso = entry.timestamp.map(MillisecondTime.iso8601) ?? ""
            let fields: [(String, String)] = [
                ("topic", entry.topic), ("environment", entry.environment), ("timestamp_iso", iso),
                ("campaign", entry.campaign), ("results", entry.results),
            ]
            switch format {
            case .text:
                out.append(contentsOf: entry.token.utf8)
            case .csv:
                CSVText.appendCell(entry.token, to: &out)
                out.append(UInt8(ascii: ","))
                CSVText.appendCell(entry.reason, to: &out)
                out.append(UInt8(ascii: ","))
                if let timestamp = entry.timestamp { DecimalText.append(timestamp, to: &out) }
                for (_, value) in fields {
                    out.append(UInt8(ascii: ","))
                    CSVText.appendUserCell(value, to: &out)
                }
                for name in keptNames {
                    out.append(UInt8(ascii: ","))
                    CSVText.appendUserCell(entry.kept?.value(named: name) ?? "", to: &out)
                }
            case .ndjson:
                out.append(contentsOf: #"{"token":"#.utf8)
                JSONText.appendString(entry.token, to: &out)
                out.append(contentsOf: #","reason":"#.utf8)
                JSONText.appendString(entry.reason, to: &out)
                if let timestamp = entry.timestamp {
                    out.append(contentsOf: #","timestamp":"#.utf8)
                    DecimalText.append(timestamp, to: &out)
                }
                for (name, value) in fields where !value.isEmpty {
                    out.append(contentsOf: ",\"\(name)\":".utf8)
                    JSONText.appendString(value, to: &out)
                }
                if let kept = entry.kept {
                    for (name, value) in zip(kept.names, kept.values) {
                        out.append(UInt8(ascii: ","))
                        JSONText.appendString(name, to: &out)
                        out.append(UInt8(ascii: ":"))
                        JSONText.appendString(value, to: &out)
                    }
                }
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "\n"))
            if out.count >= 1 << 20 {
                try sink.write(out, count: out.count)
                out.removeAll(keepingCapacity: true)
            }
        }
        if !out.isEmpty { try sink.write(out, count: out.count) }
    }

    /// Writes entries to a file (`-` for standard output), replacing it.
    public static func write(_ entries: [Entry], format: OutputFormat, toPath path: String) throws(PipelineError) {
        let opened = try AppendOnlyFile.open(path, mode: .create)
        try write(entries, format: format, to: opened.file)
    }
}
