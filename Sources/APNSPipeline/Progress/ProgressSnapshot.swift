import Foundation

/// What the progress lines say at one moment of a run: counts so far (each kind of unfinished record apart), the
/// request rate, requests in flight (and the in-flight limit, where the dispatcher has one), retries waiting, and
/// how far the inputs are read, from which the percentage done and the time left follow.
public struct ProgressSnapshot: Sendable, Equatable {
    public var elapsedSeconds: Double
    /// Records read so far.
    public var records: Int
    public var delivered: Int
    public var pruned: Int
    /// Records wrong in the file: never sent.
    public var invalid: Int
    /// Records sent and refused by APNs as a bad request (`input_error` with an answer).
    public var rejected: Int
    /// Records that ended retryable (429, 5xx, retries used up): `replay` sends them again.
    public var retryable: Int
    /// Records whose answer was lost: they may have arrived.
    public var inDoubt: Int
    /// Records the run never sent (it stopped early).
    public var notSent: Int
    public var requests: Int
    public var requestsPerSecond: Double
    public var inFlight: Int
    /// The most requests the dispatcher lets be in flight now (its adaptive window); nil when it has no such limit.
    public var window: Int?
    /// Sends waiting for their back-off.
    public var retriesPending: Int
    /// How far the inputs are read; nil for standard input and replays.
    public var read: ReadProgress?

    public init(
        elapsedSeconds: Double, records: Int, delivered: Int, pruned: Int = 0, invalid: Int = 0, rejected: Int = 0,
        retryable: Int = 0, inDoubt: Int = 0, notSent: Int = 0, requests: Int, requestsPerSecond: Double,
        inFlight: Int, window: Int? = nil, retriesPending: Int, read: ReadProgress? = nil
    ) {
        self.elapsedSeconds = elapsedSeconds
        self.records = records
        self.delivered = delivered
        self.pruned = pruned
        self.invalid = invalid
        self.rejected = rejected
        self.retryable = retryable
        self.inDoubt = inDoubt
        self.notSent = notSent
        self.requests = requests
        self.requestsPerSecond = requestsPerSecond
        self.inFlight = inFlight
        self.window = window
        self.retriesPending = retriesPending
        self.read = read
    }

    /// The facts of a summary as the dispatcher reports it with its progress.
    public init(_ summary: CampaignSummary, inFlight: Int, window: Int? = nil) {
        self.init(
            elapsedSeconds: summary.elapsedSeconds, records: summary.records, delivered: summary.count(.delivered),
            pruned: summary.count(.prune), invalid: summary.count(.inputError) - summary.rejected,
            rejected: summary.rejected, retryable: summary.count(.retryable), inDoubt: summary.count(.inDoubt),
            notSent: summary.count(.notSent), requests: summary.requests, requestsPerSecond: summary.requestRate,
            inFlight: inFlight, window: window, retriesPending: summary.retriesPending, read: summary.readProgress)
    }

    /// Records that ended retryable, in doubt or not sent: what `replay` may send again.
    public var failed: Int { retryable + inDoubt + notSent }

    /// 0 ... 1 when the inputs' size is known.
    public var fractionDone: Double? { read?.fraction }

    /// Seconds left at the pace so far, when the inputs' size is known and some of it has been read.
    public var secondsLeft: Double? {
        guard let fraction = fractionDone, fraction > 0, elapsedSeconds > 0 else { return nil }
        return elapsedSeconds * (1 - fraction) / fraction
    }
}

// MARK: - Rendering

extension ProgressSnapshot {
    /// The live display for a terminal `width` columns wide: two lines, each fitted to the width by leaving out
    /// its least important parts first (the percentage, the time left and the rate go last):
    ///
    ///     [########............] 40.0%  ETA 11s  1,020 req/s  8s elapsed
    ///     7,324 records: 7,270 delivered, 4 pruned, 2 rejected, 3 in doubt | 43 in flight (limit 64), 1 to retry
    ///
    /// Counts of zero other than delivered are left out; the result kinds are never lumped together.
    public func terminalLines(width: Int) -> [String] {
        var first: [LinePart] = []
        if let fraction = fractionDone {
            let filled = Int((fraction * Double(Self.barWidth)).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: Self.barWidth - filled)
            first.append(LinePart("[\(bar)]", keep: 3, separator: " "))
            first.append(LinePart(Self.percent(fraction), keep: 0, separator: " "))
            first.append(LinePart("ETA " + (secondsLeft.map(Self.duration) ?? "--"), keep: 1, separator: "  "))
        } else {
            first.append(LinePart("\(Self.grouped(records)) records read", keep: 0, separator: "  "))
        }
        first.append(LinePart(Self.grouped(Int(requestsPerSecond.rounded())) + " req/s", keep: 2, separator: "  "))
        first.append(LinePart(Self.duration(elapsedSeconds) + " elapsed", keep: 4, separator: "  "))

        var second = [LinePart("\(Self.grouped(records)) records", keep: 0, separator: "")]
        for (index, (count, name, keep)) in counts.enumerated() where count > 0 || index == 0 {
            second.append(LinePart("\(Self.grouped(count)) \(name)", keep: keep, separator: index == 0 ? ": " : ", "))
        }
        second.append(LinePart(Self.grouped(inFlight) + " in flight" + (window.map { " (limit \(Self.grouped($0)))" } ?? ""),
                               keep: 8, separator: " | "))
        if retriesPending > 0 { second.append(LinePart("\(Self.grouped(retriesPending)) to retry", keep: 9, separator: ", ")) }
        return [LinePart.fit(first, width: width), LinePart.fit(second, width: width)]
    }

    /// The plain line written every 10 s when stderr is not a terminal (`--progress log`), with the same facts,
    /// after the time it was written (ISO 8601, UTC), as cron and Kubernetes logs need:
    /// `2026-11-28T05:01:02Z apns-bulk: progress 40.0% ETA 11s | 7324 records: 7270 delivered, … | 43 in flight | …`.
    public func logLine(at time: Double) -> String {
        var facts: [String] = []
        if let fraction = fractionDone { facts.append(Self.percent(fraction) + " ETA " + (secondsLeft.map(Self.duration) ?? "--")) }
        let counted = counts.enumerated().filter { $0.offset == 0 || $0.element.count > 0 }
        facts.append("\(records) records: " + counted.map { "\($0.element.count) \($0.element.name)" }.joined(separator: ", "))
        facts.append("\(inFlight) in flight" + (window.map { " (limit \($0))" } ?? "") + ", \(retriesPending) to retry")
        facts.append(String(format: "%.0f req/s", requestsPerSecond))
        facts.append(Self.duration(elapsedSeconds) + " elapsed")
        return Self.iso8601(time) + " apns-bulk: progress " + facts.joined(separator: " | ")
    }

    /// One JSON object on one line (`--progress json`); `percent_done` and `eta_seconds` only when the inputs'
    /// size is known, `window` only when the dispatcher has one. `failed` is `retryable + in_doubt + not_sent`.
    public func jsonLine(at time: Double) -> String {
        var object: [String: Any] = [
            "time": Self.iso8601(time),
            "elapsed_seconds": Self.rounded(elapsedSeconds, places: 1),
            "records": records, "delivered": delivered, "pruned": pruned, "invalid": invalid, "rejected": rejected,
            "retryable": retryable, "in_doubt": inDoubt, "not_sent": notSent, "failed": failed,
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

    /// Each count with its name and how long it stays on a narrow line (lower stays longer); delivered first.
    private var counts: [(count: Int, name: String, keep: Int)] {
        [(delivered, "delivered", 1), (pruned, "pruned", 5), (rejected, "rejected", 4), (invalid, "invalid", 6),
         (retryable, "retryable", 3), (inDoubt, "in doubt", 2), (notSent, "not sent", 7)]
    }

    /// `2026-11-28T05:01:02Z`.
    static func iso8601(_ time: Double) -> String {
        Date(timeIntervalSince1970: time.rounded(.down)).formatted(.iso8601)
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

/// One part of a live progress line: its text, the separator put before it when a part precedes it, and how
/// long it stays when the line is too wide (parts with a higher `keep` are left out first, the rightmost first
/// among equals). A part's separator belongs to it, so a line reads right whichever parts are left.
struct LinePart {
    let text: String
    let keep: Int
    let separator: String

    init(_ text: String, keep: Int, separator: String) {
        self.text = text
        self.keep = keep
        self.separator = separator
    }

    /// The parts that fit in `width` columns, joined; the last part standing is cut to the width. The text is
    /// ASCII (digits, words, `#`, `.`), so a character is a column.
    static func fit(_ parts: [LinePart], width: Int) -> String {
        var kept = parts
        func joined() -> String {
            kept.enumerated().map { $0.offset == 0 ? $0.element.text : $0.element.separator + $0.element.text }.joined()
        }
        var line = joined()
        while line.count > width, kept.count > 1 {
            let drop = kept.indices.max { (kept[$0].keep, $0) < (kept[$1].keep, $1) } ?? kept.index(before: kept.endIndex)
            kept.remove(at: drop)
            line = joined()
        }
        return line.count > width ? String(line.prefix(max(0, width))) : line
    }
}

// MARK: - ReadProgress

/// How far a run has read its campaign files: bytes consumed over the total size of the inputs (for a `.gz`
/// input, compressed bytes over the compressed size). Only known when every input is a regular file.
public struct ReadProgress: Sendable, Equatable {
    public var bytesRead: Int64
    public var bytesTotal: Int64

    public init(bytesRead: Int64, bytesTotal: Int64) {
        self.bytesRead = bytesRead
        self.bytesTotal = bytesTotal
    }

    /// 0 ... 1; 1 for empty inputs.
    public var fraction: Double {
        bytesTotal > 0 ? min(1, max(0, Double(bytesRead) / Double(bytesTotal))) : 1
    }
}

extension RecordReader {
    /// Readers that cannot say how far they are (result files being replayed, tests) report nothing.
    public var readProgress: ReadProgress? { nil }
}
