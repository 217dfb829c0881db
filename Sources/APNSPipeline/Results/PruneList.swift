import APNSCore

/// The tokens to delete from a token database, from result files: every record whose outcome is `prune`
/// (410 `Unregistered`/`ExpiredToken` with APNs's timestamp, `BadDeviceToken`, `DeviceTokenNotForTopic`),
/// one entry per token across all files, in the order tokens were first seen.
///
/// When a token appears more than once: an entry without a timestamp (`BadDeviceToken`,
/// `DeviceTokenNotForTopic`: the token is always dead) wins; otherwise the latest timestamp wins.
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

        public init(token: String, reason: String, timestamp: Int64?) {
            self.token = token
            self.reason = reason
            self.timestamp = timestamp
        }
    }

    /// How the list is written.
    public enum OutputFormat: String, Sendable, CaseIterable {
        /// One token per line.
        case text
        /// `token,reason,timestamp` with a header row.
        case csv
        /// One JSON object per line: `{"token":…,"reason":…,"timestamp":…}`.
        case ndjson
    }

    public private(set) var entries: [Entry] = []
    private var positionByToken: [String: Int] = [:]
    /// Torn last lines skipped while reading files, as `file:line`.
    public private(set) var tornLines: [String] = []

    public init() {}

    /// Tokens called bad in a run that accepted no token of their topic (`TokenRejectionCheck`): not listed, since
    /// the endpoint or the topic may have been wrong rather than the tokens.
    public private(set) var heldBack = 0

    /// Adds a result if its outcome is `prune` and its topic was confirmed in its run.
    public mutating func add(_ record: ResultRecord) {
        guard record.outcome == .prune, let token = record.token, !token.isEmpty else { return }
        if record.detail?.hasPrefix(TokenRejectionCheck.unconfirmedPrefix) == true {
            heldBack += 1
            return
        }
        let entry = Entry(token: token, reason: record.reason ?? "", timestamp: record.timestamp)
        guard let position = positionByToken[token] else {
            positionByToken[token] = entries.count
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
    /// delivered to is not listed.
    public mutating func add(resultsAt paths: [String]) throws(PipelineError) {
        let (_, torn) = try ResultChain.forEachStandingLine(resultPaths: paths) { record, _ in add(record) }
        tornLines += torn
    }

    /// The entries that pass the cutoff (milliseconds since the epoch); nil keeps all.
    public func entries(after cutoff: Int64?) -> [Entry] {
        guard let cutoff else { return entries }
        return entries.filter { entry in entry.timestamp.map { $0 > cutoff } ?? true }
    }

    /// Writes entries in a format.
    public static func write(_ entries: [Entry], format: OutputFormat, to sink: any ByteSink) throws(PipelineError) {
        var out: [UInt8] = []
        out.reserveCapacity(64 * 1024)
        if format == .csv { out.append(contentsOf: "token,reason,timestamp\n".utf8) }
        for entry in entries {
            switch format {
            case .text:
                out.append(contentsOf: entry.token.utf8)
            case .csv:
                CSVText.appendCell(entry.token, to: &out)
                out.append(UInt8(ascii: ","))
                CSVText.appendCell(entry.reason, to: &out)
                out.append(UInt8(ascii: ","))
                if let timestamp = entry.timestamp { DecimalText.append(timestamp, to: &out) }
            case .ndjson:
                out.append(contentsOf: #"{"token":"#.utf8)
                JSONText.appendString(entry.token, to: &out)
                out.append(contentsOf: #","reason":"#.utf8)
                JSONText.appendString(entry.reason, to: &out)
                if let timestamp = entry.timestamp {
                    out.append(contentsOf: #","timestamp":"#.utf8)
                    DecimalText.append(timestamp, to: &out)
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
