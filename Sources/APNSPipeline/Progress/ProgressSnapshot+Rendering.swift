import Foundation

extension ProgressSnapshot {
    /// The live display for a terminal, two lines (a narrow terminal clips their ends):
    ///
    ///     [########............] 40.0%  ETA 11s  1,020 req/s  8s elapsed
    ///     7,324 records: 7,278 delivered, 0 pruned, 0 invalid, 0 failed | 43 in flight, 3 retries pending
    public var terminalLines: [String] {
        var first: [String] = []
        if let fraction = fractionDone {
            let filled = Int((fraction * Double(Self.barWidth)).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: Self.barWidth - filled)
            first.append("[\(bar)] " + Self.percent(fraction) + "  ETA " + (secondsLeft.map(Self.duration) ?? "--"))
        } else {
            first.append("\(Self.grouped(records)) records read")
        }
        first.append(Self.grouped(Int(requestsPerSecond.rounded())) + " req/s")
        first.append(Self.duration(elapsedSeconds) + " elapsed")
        return [first.joined(separator: "  "), counts(grouping: true) + " | " + flight]
    }

    /// The plain line written every 10 s when stderr is not a terminal (`--progress log`), with the same facts:
    /// `apns-bulk: progress 40.0% ETA 11s | 7324 records: 7278 delivered, … | 43 in flight, 3 retries pending | …`.
    public var logLine: String {
        var facts: [String] = []
        if let fraction = fractionDone { facts.append(Self.percent(fraction) + " ETA " + (secondsLeft.map(Self.duration) ?? "--")) }
        facts.append(counts(grouping: false))
        facts.append(flight)
        facts.append(String(format: "%.0f req/s", requestsPerSecond))
        facts.append(Self.duration(elapsedSeconds) + " elapsed")
        return "apns-bulk: progress " + facts.joined(separator: " | ")
    }

    /// One JSON object on one line (`--progress json`); `percent_done` and `eta_seconds` only when the inputs'
    /// size is known, `window` only when the dispatcher has one.
    public var jsonLine: String {
        var object: [String: Any] = [
            "elapsed_seconds": Self.rounded(elapsedSeconds, places: 1),
            "records": records, "delivered": delivered, "pruned": pruned, "invalid": invalid, "failed": failed,
            "requests": requests, "requests_per_second": Self.rounded(requestsPerSecond, places: 1),
            "in_flight": inFlight, "retries_pending": retriesPending,
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

    private static let barWidth = 20

    private func counts(grouping: Bool) -> String {
        func number(_ value: Int) -> String { grouping ? Self.grouped(value) : "\(value)" }
        return "\(number(records)) records: \(number(delivered)) delivered, \(number(pruned)) pruned, "
            + "\(number(invalid)) invalid, \(number(failed)) failed"
    }

    private var flight: String {
        (window.map { "\(inFlight)/\($0) in flight" } ?? "\(inFlight) in flight") + ", \(retriesPending) retries pending"
    }

    private static func percent(_ fraction: Double) -> String {
        String(format: "%.1f%%", fraction * 100)
    }

    /// `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = value < 0 ? "-" : ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
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
