import APNSCore
import Foundation

/// A run's figures in the Prometheus text format, for node_exporter's textfile collector (`--metrics FILE`): every
/// series labelled with the campaign and the shard (so several shards' files can sit in one folder), counters typed
/// as counters, latency as a summary, and the two timestamps cron jobs are alerted on. `promtool check metrics`
/// accepts it (a test runs it); the file is written as node_exporter needs it (`write`).
public struct CampaignMetrics: Sendable {
    /// The name of the gauge that keeps the end of the last run that finished (statuses 0, 2, 3).
    public static let lastSuccessName = "apns_bulk_last_success_timestamp_seconds"

    /// `campaign`: `--metrics-label`, else the result file's name without its extension.
    public var campaign: String
    /// `shard`: `K/N` from `--shard`, or `all`.
    public var shard: String

    /// Metrics labelled with the campaign and shard.
    public init(campaign: String, shard: String) {
        self.campaign = campaign
        self.shard = shard
    }

    /// The campaign label a result file's name gives: its last path component without `.ndjson`/`.csv`.
    public static func campaign(forResults path: String) -> String {
        var name = (path as NSString).lastPathComponent
        for suffix in [".ndjson", ".csv", ".jsonl"] where name.hasSuffix(suffix) { name.removeLast(suffix.count) }
        return name.isEmpty || path == "-" ? "stdout" : name
    }

    /// The metrics of a run that ended at `now` (seconds since the epoch). `lastSuccess` is the end of the last
    /// run that finished, this one's when it did, else the one an earlier run wrote (nil: none yet). `inProgress`:
    /// the figures so far of a run still going (`--pushgateway-interval`): `apns_bulk_run_in_progress 1`, and no
    /// run-end time (the gateway keeps the last run's).
    public func text(_ summary: CampaignSummary, now: Double, lastSuccess: Double?, inProgress: Bool = false) -> String
    {
        var out = ""
        let labels = "campaign=\"\(Self.escaped(campaign))\",shard=\"\(Self.escaped(shard))\""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func sample(_ name: String, _ extra: String = "", value: Double) {
            out += "\(name){\(labels)\(extra.isEmpty ? "" : "," + extra)} \(Self.number(value))\n"
        }
        let campaignTally = summary.campaign
        family(
            "apns_bulk_records_total", "counter", "Campaign records by final outcome (every run of the result file).")
        for outcome in RecordOutcome.allCases {
            sample(
                "apns_bulk_records_total", "outcome=\"\(outcome.rawValue)\"",
                value: Double(campaignTally.count(outcome)))
        }
        family("apns_bulk_run_records_total", "counter", "Records by final outcome written by the last run.")
        for outcome in RecordOutcome.allCases {
            sample(
                "apns_bulk_run_records_total", "outcome=\"\(outcome.rawValue)\"", value: Double(summary.count(outcome)))
        }
        family("apns_bulk_requests_total", "counter", "Requests the last run sent to APNs.")
        sample("apns_bulk_requests_total", value: Double(summary.requests))
        family("apns_bulk_retries_total", "counter", "Requests the last run sent again (retries and resends).")
        sample("apns_bulk_retries_total", value: Double(summary.retries))
        family("apns_bulk_run_duration_seconds", "gauge", "How long the last run took.")
        sample("apns_bulk_run_duration_seconds", value: summary.elapsedSeconds)
        family(
            "apns_bulk_request_latency_seconds", "summary",
            "Request latency in the last run, from sending to the answer.")
        for quantile in [0.5, 0.9, 0.99] {
            sample(
                "apns_bulk_request_latency_seconds", "quantile=\"\(quantile)\"",
                value: summary.latencies.percentile(quantile))
        }
        sample("apns_bulk_request_latency_seconds_sum", value: summary.latencies.sum)
        sample("apns_bulk_request_latency_seconds_count", value: Double(summary.latencies.count))
        let stopped = if case .stoppedEarly = summary.ending { 1.0 } else { 0.0 }
        family(
            "apns_bulk_stopped_early", "gauge", "1 when the last run stopped early (credentials, settings, transport).")
        sample("apns_bulk_stopped_early", value: stopped)
        let deadlinePassed = if case .deadlinePassed = summary.ending { 1.0 } else { 0.0 }
        family(
            "apns_bulk_deadline_passed", "gauge",
            "1 when the last run ended at the --not-after deadline (records expired).")
        sample("apns_bulk_deadline_passed", value: deadlinePassed)
        family(
            "apns_bulk_run_in_progress", "gauge",
            "1 while a run pushes its figures so far (--pushgateway-interval), 0 once it ended.")
        sample("apns_bulk_run_in_progress", value: inProgress ? 1 : 0)
        if !inProgress {
            family(
                "apns_bulk_last_run_end_timestamp_seconds", "gauge",
                "When the last run ended, in seconds since the epoch.")
            sample("apns_bulk_last_run_end_timestamp_seconds", value: now)
        }
        if let lastSuccess {
            family(
                Self.lastSuccessName, "gauge",
                "When the last run that finished the campaign ended, in seconds since the epoch.")
            sample(Self.lastSuccessName, value: lastSuccess)
        }
        return out
    }

    /// Writes `text` as node_exporter's textfile collector needs it: to a new file in the same folder, renamed into
    /// place (a scrape never reads half a file), created with the user's umask (mode 0666 before it: node_exporter
    /// runs as its own user, and the file holds no token and no secret). A device, a FIFO or a symbolic link
    /// (`/dev/null`, `/dev/stdout`) is written in place, through the link, and stays what it was.
    public static func write(_ text: String, to path: String) throws(PipelineError) {
        try POSIXFile.replaceAtomically(path, with: Array(text.utf8), mode: 0o666, throughLinks: true)
    }

    /// The last-success timestamp an earlier run wrote to `path`, kept when this run did not finish.
    public static func lastSuccess(atPath path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(lastSuccessName + "{") {
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) { return value }
        }
        return nil
    }

    /// A label value as the text format writes it: backslash, double quote and line feed escaped.
    static func escaped(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// A sample value: integers without a fraction, others as Swift prints them.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
