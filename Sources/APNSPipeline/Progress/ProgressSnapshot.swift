import APNSCore
import Foundation

/// What the progress lines say at one moment of a run: counts so far (each kind of unfinished record apart), the
/// request rate, requests in flight (and the in-flight limit, where the dispatcher has one), retries waiting, and
/// how far the inputs are read. The percentage done is the records with their final line (answered, or final
/// without a request: invalid, duplicate, finished by the run resumed) over the campaign's record count, exact once
/// the reader reached the end and estimated from the bytes read before (`ReadProgress.total`); the time left is
/// the records left over the rate they end at, never faster than `--rate` (docs/RUNNING.md, "Progress").
public struct ProgressSnapshot: Sendable, Equatable {
    /// Seconds since the run started.
    public var elapsedSeconds: Double
    /// Records read so far.
    public var records: Int
    /// Records APNs accepted so far.
    public var delivered: Int
    /// Records whose token APNs reported as no longer valid, to prune.
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
    /// Records never sent because the `--not-after` deadline passed.
    public var expired: Int
    /// Requests sent so far, retries included.
    public var requests: Int
    /// The recent request rate, in requests per second.
    public var requestsPerSecond: Double
    /// Requests awaiting their answer at the moment of the snapshot.
    public var inFlight: Int
    /// The most requests the dispatcher lets be in flight now (its adaptive window); nil when it has no such limit.
    public var window: Int?
    /// Sends waiting for their back-off.
    public var retriesPending: Int
    /// How far the inputs are read; nil for standard input and replays.
    public var read: ReadProgress?
    /// Later copies of a (token, topic) pair: final without a request.
    public var duplicates: Int
    /// Records the run being resumed had finished: read again, not counted in `records`.
    public var skipped: Int
    /// `--rate`: requests started per second at most.
    public var rateLimit: Double?

    /// A snapshot of the given figures.
    public init(
        elapsedSeconds: Double, records: Int, delivered: Int, pruned: Int = 0, invalid: Int = 0, rejected: Int = 0,
        retryable: Int = 0, inDoubt: Int = 0, notSent: Int = 0, requests: Int, requestsPerSecond: Double,
        inFlight: Int, window: Int? = nil, retriesPending: Int, read: ReadProgress? = nil, duplicates: Int = 0,
        skipped: Int = 0, rateLimit: Double? = nil, expired: Int = 0
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
        self.expired = expired
        self.requests = requests
        self.requestsPerSecond = requestsPerSecond
        self.inFlight = inFlight
        self.window = window
        self.retriesPending = retriesPending
        self.read = read
        self.duplicates = duplicates
        self.skipped = skipped
        self.rateLimit = rateLimit
    }

    /// The facts of a summary as the dispatcher reports it with its progress.
    public init(_ summary: CampaignSummary, inFlight: Int, window: Int? = nil, rateLimit: Double? = nil) {
        self.init(
            elapsedSeconds: summary.elapsedSeconds, records: summary.records, delivered: summary.count(.delivered),
            pruned: summary.count(.prune), invalid: summary.count(.inputError) - summary.rejected,
            rejected: summary.rejected, retryable: summary.count(.retryable), inDoubt: summary.count(.inDoubt),
            notSent: summary.count(.notSent), requests: summary.requests, requestsPerSecond: summary.requestRate,
            inFlight: inFlight, window: window, retriesPending: summary.retriesPending, read: summary.readProgress,
            duplicates: summary.count(.duplicate), skipped: summary.recordsSkipped, rateLimit: rateLimit,
            expired: summary.count(.expired))
    }

    /// Records that ended retryable, in doubt or not sent: what `replay` may send again.
    public var failed: Int { retryable + inDoubt + notSent }

    /// Records with their final line: this run's (answered, or final without a request) and those the run being
    /// resumed had finished.
    public var recordsDone: Int { doneThisRun + skipped }

    /// This run's final lines.
    private var doneThisRun: Int {
        delivered + pruned + invalid + rejected + retryable + inDoubt + notSent + expired + duplicates
    }

    /// The campaign's record count, when the inputs' size is known and a record was read.
    public var total: RecordTotal? { read?.total }

    /// 0 ... 1: records done over the total, when it is known. 1 only once every record has its final line of an
    /// exact total (never on an estimate, which may be short).
    public var fractionDone: Double? {
        guard let total else { return nil }
        guard total.count > 0 else { return 1 }
        if case .exact(let count) = total, recordsDone >= count { return 1 }
        return min(0.999, Double(recordsDone) / Double(total.count))
    }

    /// Seconds left: the records left over the rate records end at so far, never faster than `--rate`; nil
    /// before a record ended or while the total is unknown.
    public var secondsLeft: Double? {
        guard let total else { return nil }
        let left = max(0, total.count - recordsDone)
        if left == 0, fractionDone == 1 { return 0 }
        guard elapsedSeconds > 0, doneThisRun > 0 else { return nil }
        var rate = Double(doneThisRun) / elapsedSeconds
        if let rateLimit, rateLimit > 0 { rate = min(rate, rateLimit) }
        return Double(max(1, left)) / rate
    }
}

// MARK: - Rendering

extension ProgressSnapshot {
    /// The live display for a terminal `width` columns wide: two lines, each fitted to the width by leaving out
    /// its least important parts first (the percentage, the time left and the rate go last):
    ///
    ///     [########............] 40.0% of ~18,300  ETA 11s  1,020 req/s  8s elapsed
    ///     7,324 records: 7,270 delivered, 4 pruned, 2 rejected, 3 in doubt | 43 in flight (limit 64), 1 to retry
    ///
    /// The percentage is of the records done, out of the total (`~`: estimated from the bytes read). Counts of
    /// zero other than delivered are left out; the result kinds are never lumped together.
    public func terminalLines(width: Int) -> [String] {
        var first: [LinePart] = []
        if let fraction = fractionDone {
            let filled = Int((fraction * Double(Self.barWidth)).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: Self.barWidth - filled)
            first.append(LinePart("[\(bar)]", keep: 3, separator: " "))
            first.append(LinePart(Self.percent(fraction), keep: 0, separator: " "))
            if let total { first.append(LinePart("of \(total.text)", keep: 5, separator: " ")) }
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
        second.append(
            LinePart(
                Self.grouped(inFlight) + " in flight" + (window.map { " (limit \(Self.grouped($0)))" } ?? ""),
                keep: 8, separator: " | "))
        if retriesPending > 0 {
            second.append(LinePart("\(Self.grouped(retriesPending)) to retry", keep: 9, separator: ", "))
        }
        return [LinePart.fit(first, width: width), LinePart.fit(second, width: width)]
    }

    /// The plain line written every 10 s when stderr is not a terminal (`--progress log`), with the same facts,
    /// after the time it was written (ISO 8601, UTC), as cron and Kubernetes logs need:
    /// `2026-11-28T05:01:02Z apns-bulk: progress 40.0% of ~18300 ETA 11s | 7324 records: 7270 delivered, … | …`.
    public func logLine(at time: Double) -> String {
        var facts: [String] = []
        if let fraction = fractionDone, let total {
            let count = (total == .exact(total.count) ? "" : "~") + "\(total.count)"
            facts.append(Self.percent(fraction) + " of \(count) ETA " + (secondsLeft.map(Self.duration) ?? "--"))
        }
        let counted = counts.enumerated().filter { $0.offset == 0 || $0.element.count > 0 }
        facts.append(
            CountedNoun.text(records, "record") + ": "
                + counted.map { "\($0.element.count) \($0.element.name)" }.joined(separator: ", "))
        facts.append("\(inFlight) in flight" + (window.map { " (limit \($0))" } ?? "") + ", \(retriesPending) to retry")
        facts.append(String(format: "%.0f req/s", requestsPerSecond))
        facts.append(Self.duration(elapsedSeconds) + " elapsed")
        return Self.iso8601(time) + " apns-bulk: progress " + facts.joined(separator: " | ")
    }

    /// One JSON object on one line (`--progress json`); `percent_done`, `records_total` (with
    /// `records_total_estimated`) and `eta_seconds` only when the inputs' size is known, `window` only when the
    /// dispatcher has one, `expired` only once a record expired. `failed` is `retryable + in_doubt + not_sent`; `records_done` counts every final line.
    public func jsonLine(at time: Double) -> String {
        var object: [String: Any] = [
            "time": Self.iso8601(time),
            "elapsed_seconds": Self.rounded(elapsedSeconds, places: 1),
            "records": records, "delivered": delivered, "pruned": pruned, "invalid": invalid, "rejected": rejected,
            "retryable": retryable, "in_doubt": inDoubt, "not_sent": notSent, "failed": failed,
            "requests": requests, "requests_per_second": Self.rounded(requestsPerSecond, places: 1),
            "in_flight": inFlight, "retries_pending": retriesPending, "duplicate": duplicates,
            "records_done": recordsDone,
        ]
        if skipped > 0 { object["skipped"] = skipped }
        if expired > 0 { object["expired"] = expired }
        if let total {
            object["records_total"] = total.count
            object["records_total_estimated"] = total != .exact(total.count)
        }
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
        [
            (delivered, "delivered", 1), (pruned, "pruned", 5), (rejected, "rejected", 4), (invalid, "invalid", 6),
            (retryable, "retryable", 3), (inDoubt, "in doubt", 2), (notSent, "not sent", 7), (expired, "expired", 7),
        ]
    }

    /// `2026-11-28T05:01:02Z`.
    static func iso8601(_ time: Double) -> String {
        Date(timeIntervalSince1970: time.rounded(.down)).formatted(.iso8601)
    }

    /// `99.9%`: rounded down, so that 100% means every record done.
    private static func percent(_ fraction: Double) -> String {
        String(format: "%.1f%%", (fraction * 1000).rounded(.down) / 10)
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
            let drop =
                kept.indices.max { (kept[$0].keep, $0) < (kept[$1].keep, $1) } ?? kept.index(before: kept.endIndex)
            kept.remove(at: drop)
            line = joined()
        }
        return line.count > width ? String(line.prefix(max(0, width))) : line
    }
}

// MARK: - ReadProgress

/// How far a run has read its campaign files: bytes consumed over the total size of the inputs (for a `.gz`
/// input, compressed bytes over the compressed size), and the records of this shard those bytes held. Only known
/// when every input is a regular file. From them follows the campaign's record count (`RecordTotal`).
public struct ReadProgress: Sendable, Equatable {
    /// Bytes of input read so far, over all input files.
    public var bytesRead: Int64
    /// Total bytes of the input files; 0 when unknown.
    public var bytesTotal: Int64
    /// Records of this shard read so far (valid or not, finished by a run resumed or not).
    public var records: Int
    /// Every input has been read to its end: `records` is the total.
    public var inputsEnded: Bool

    /// Read progress from byte counts, the records read, and whether every input has ended.
    public init(bytesRead: Int64, bytesTotal: Int64, records: Int = 0, inputsEnded: Bool = false) {
        self.bytesRead = bytesRead
        self.bytesTotal = bytesTotal
        self.records = records
        self.inputsEnded = inputsEnded
    }

    /// 0 ... 1; 1 for empty inputs.
    public var fraction: Double {
        bytesTotal > 0 ? min(1, max(0, Double(bytesRead) / Double(bytesTotal))) : 1
    }

    /// The campaign's record count: exact once every input was read to its end, else the records read so far
    /// scaled by the bytes that held them (the inputs' size over the bytes read); nil before any record was read.
    public var total: RecordTotal? {
        if inputsEnded { return .exact(records) }
        guard records > 0, bytesRead > 0 else { return nil }
        let scaled = (Double(records) * Double(bytesTotal) / Double(bytesRead)).rounded()
        return .estimated(max(records, Int(min(scaled, Double(Int.max / 2)))))
    }
}

/// How many records the campaign has, as far as the reader can tell.
public enum RecordTotal: Sendable, Equatable {
    /// Every input read to its end.
    case exact(Int)
    /// Extrapolated from the bytes read so far (records of a similar size ahead).
    case estimated(Int)

    /// The count, exact or estimated.
    public var count: Int {
        switch self {
        case .exact(let count), .estimated(let count): count
        }
    }

    /// `12,000`, or `~12,000` for an estimate.
    var text: String {
        switch self {
        case .exact(let count): ProgressSnapshot.grouped(count)
        case .estimated(let count): "~" + ProgressSnapshot.grouped(count)
        }
    }
}

extension RecordReader {
    /// Readers that cannot say how far they are (result files being replayed, tests) report nothing.
    public var readProgress: ReadProgress? { nil }
}
