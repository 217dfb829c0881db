import APNSCore
import Foundation

extension DispatchSummary {
    /// Requests per second over the run.
    public var requestRate: Double { elapsedSeconds > 0 ? Double(requests) / elapsedSeconds : 0 }

    /// A few lines for stderr at the end of a run.
    public func text(resultsPath: String?) -> String {
        var lines: [String] = []
        switch ending {
        case .completed: lines.append("finished: \(records) records in \(String(format: "%.1f", elapsedSeconds)) s")
        case .stoppedEarly(let why): lines.append("STOPPED EARLY: \(why)")
        case .interrupted: lines.append("interrupted: run again with --resume to finish")
        }
        let counts = RecordOutcome.allCases.filter { count($0) > 0 }.map { "\($0.rawValue) \(count($0))" }
        lines.append("  outcomes: " + (counts.isEmpty ? "none" : counts.joined(separator: ", ")))
        for (reason, count) in reasons.sorted(by: { $0.value > $1.value }).prefix(8) {
            lines.append("    \(reason): \(count)")
        }
        lines.append(String(format: "  requests: %d (%d retries), %.0f/s; latency p50 %.1f ms, p99 %.1f ms",
                            requests, retries, requestRate, latencies.percentile(0.5) * 1000, latencies.percentile(0.99) * 1000))
        lines.append("  in flight: window \(inFlightWindow) at the end, at most \(maximumInFlight) at once")
        if let resultsPath { lines.append("  results: \(resultsPath)") }
        return lines.joined(separator: "\n")
    }

    /// The summary as JSON (`--summary FILE`).
    public func json(connections: Int) -> [UInt8] {
        var ending: [String: Any] = [:]
        switch self.ending {
        case .completed: ending = ["state": "completed"]
        case .stoppedEarly(let why): ending = ["state": "stopped_early", "reason": why]
        case .interrupted: ending = ["state": "interrupted"]
        }
        let object: [String: Any] = [
            "ending": ending,
            "records": records,
            "outcomes": Dictionary(uniqueKeysWithValues: RecordOutcome.allCases.map { ($0.rawValue, count($0)) }),
            "reasons": reasons,
            "requests": requests,
            "retries": retries,
            "elapsed_seconds": elapsedSeconds,
            "requests_per_second": requestRate,
            "latency_seconds": [
                "p50": latencies.percentile(0.5), "p90": latencies.percentile(0.9),
                "p99": latencies.percentile(0.99), "max": latencies.maximum,
            ],
            "connections": connections,
            "in_flight_window": inFlightWindow,
            "maximum_in_flight": maximumInFlight,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return Array(data) + [0x0A]
    }

    /// The summary in the Prometheus text format, for a node-exporter textfile collector (`--metrics FILE`).
    public func prometheus() -> String {
        var out = "# HELP apns_bulk_records_total Campaign records by final outcome.\n# TYPE apns_bulk_records_total gauge\n"
        for outcome in RecordOutcome.allCases {
            out += "apns_bulk_records_total{outcome=\"\(outcome.rawValue)\"} \(count(outcome))\n"
        }
        out += "# HELP apns_bulk_requests_total Requests sent to APNs.\n# TYPE apns_bulk_requests_total gauge\n"
        out += "apns_bulk_requests_total \(requests)\n"
        out += "# HELP apns_bulk_retries_total Requests retried.\n# TYPE apns_bulk_retries_total gauge\n"
        out += "apns_bulk_retries_total \(retries)\n"
        out += "# HELP apns_bulk_duration_seconds Length of the run.\n# TYPE apns_bulk_duration_seconds gauge\n"
        out += "apns_bulk_duration_seconds \(elapsedSeconds)\n"
        out += "# HELP apns_bulk_latency_seconds Request latency quantiles.\n# TYPE apns_bulk_latency_seconds gauge\n"
        for quantile in [0.5, 0.9, 0.99] {
            out += "apns_bulk_latency_seconds{quantile=\"\(quantile)\"} \(latencies.percentile(quantile))\n"
        }
        let stopped = if case .stoppedEarly = ending { 1 } else { 0 }
        out += "# HELP apns_bulk_stopped_early Whether the run stopped early.\n# TYPE apns_bulk_stopped_early gauge\n"
        out += "apns_bulk_stopped_early \(stopped)\n"
        return out
    }
}
