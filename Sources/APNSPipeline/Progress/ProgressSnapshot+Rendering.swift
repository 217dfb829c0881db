import Foundation

extension ProgressSnapshot {
    /// The live line for a terminal, most important facts first (a narrow terminal clips the end):
    /// `42.0% ETA 2m10s | 5200 records | 5100 delivered | …`.
    public var terminalLine: String {
        facts.joined(separator: " | ")
    }

    /// The plain line written every 10 s when stderr is not a terminal (`--progress log`).
    public var logLine: String {
        "apns-bulk: progress " + facts.joined(separator: " | ")
    }

    /// One JSON object on one line (`--progress json`); `percent_done` and `eta_seconds` only when the inputs'
    /// size is known, `window` only when the dispatcher has one.
    public var jsonLine: String {
        var object: [String: Any] = [
            "elapsed_seconds": Self.rounded(elapsedSeconds, places: 1),
            "records": records, "delivered": delivered, "pruned": pruned, "invalid": invalid, "failed": failed,
            "requests": requests, "requests_per_second": Self.rounded(requestsPerSecond, places: 1),
            "in_flight": inFlight, "retries_waiting": retriesWaiting,
        ]
        if let window { object["window"] = window }
        if let read {
            object["bytes_read"] = read.bytesRead
            object["bytes_total"] = read.bytesTotal
        }
        if let fraction = fractionDone { object["percent_done"] = Self.rounded(fraction * 100, places: 1) }
        if let left = secondsLeft { object["eta_seconds"] = Self.rounded(left, places: 0) }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The facts in the order they are shown.
    private var facts: [String] {
        var facts: [String] = []
        if let fraction = fractionDone {
            let eta = secondsLeft.map(Self.duration) ?? "--"
            facts.append(String(format: "%.1f%%", fraction * 100) + " ETA " + eta)
        }
        facts.append("\(records) records")
        facts.append("\(delivered) delivered")
        facts.append("\(pruned) pruned")
        facts.append("\(invalid) invalid")
        facts.append("\(failed) failed")
        facts.append(window.map { "\(inFlight)/\($0) in flight" } ?? "\(inFlight) in flight")
        facts.append("\(retriesWaiting) retries pending")
        facts.append(String(format: "%.0f req/s", requestsPerSecond))
        facts.append(Self.duration(elapsedSeconds) + " elapsed")
        return facts
    }

    /// `45s`, `2m10s`, `1h02m`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded())
        if total < 60 { return "\(total)s" }
        if total < 3600 { return "\(total / 60)m\(String(format: "%02d", total % 60))s" }
        return "\(total / 3600)h\(String(format: "%02d", total % 3600 / 60))m"
    }

    private static func rounded(_ value: Double, places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}
