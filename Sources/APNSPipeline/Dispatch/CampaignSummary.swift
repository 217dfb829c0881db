import APNSCore
import Foundation

/// How a campaign run ended and what it did: counts by outcome and reason, requests, retries and latencies.
public struct CampaignSummary: Sendable {
    /// Why the run ended.
    public enum Ending: Sendable, Equatable {
        /// Every record has its final result line.
        case completed
        /// The campaign was stopped early (credentials, misconfiguration, a transport that cannot work);
        /// records not sent are marked `not_sent`.
        case stoppedEarly(String)
        /// Stopped by a signal; records not yet processed have no result line (`send --resume` finishes them).
        case interrupted
        /// The `--not-after` deadline (an ISO-8601 instant) passed: nothing new was sent from then on, and every
        /// record not sent by then has its `expired` line.
        case deadlinePassed(String)
    }

    /// Why the run ended; `completed` until something stops it.
    public var ending: Ending = .completed
    /// Records per outcome, the outcomes that occurred. Kept as a fixed table by `RecordOutcome.caseIndex` (every
    /// record adds one; hashing a key each time was a cost per record); this view is built when read.
    public var outcomes: [RecordOutcome: Int] {
        get {
            var counts: [RecordOutcome: Int] = [:]
            for outcome in RecordOutcome.allCases where outcomeCounts[outcome.caseIndex] != 0 {
                counts[outcome] = outcomeCounts[outcome.caseIndex]
            }
            return counts
        }
        set {
            outcomeCounts = InlineArray(repeating: 0)
            for (outcome, count) in newValue { outcomeCounts[outcome.caseIndex] = count }
        }
    }
    private var outcomeCounts = InlineArray<8, Int>(repeating: 0)
    /// Counts by "outcome/reason", e.g. "prune/Unregistered".
    public var reasons: [String: Int] = [:]
    /// Records this run processed: one per final result line it wrote.
    public var records = 0
    /// Records read that the run being resumed had finished (not counted in `records`), for the progress lines.
    public var recordsSkipped = 0
    /// Records sent and refused by APNs as a bad request: the `input_error` lines that carry an answer (the rest
    /// were invalid in the file and never sent).
    public var rejected = 0
    /// Requests sent on the wire, retries included.
    public var requests = 0
    /// Requests APNs (or the server) answered, whatever the answer: 0 means nothing is known to have reached it.
    public var answered = 0
    /// Requests sent again after a retryable answer or a lost connection.
    public var retries = 0
    /// The latencies of answered requests, from send to answer.
    public var latencies = LatencyHistogram()
    /// Wall-clock seconds the run took.
    public var elapsedSeconds = 0.0
    /// The final lines written by the runs this one resumes (`--resume`); empty for a new run.
    public var earlierRuns = CampaignTally()
    /// Sends waiting for their back-off before the next try (set with each progress report).
    public var retriesPending = 0
    /// How far the inputs have been read, when the record reader can tell (set with each progress report).
    public var readProgress: ReadProgress?
    /// The in-flight window (requests allowed in flight across all connections) at the last report.
    public var inFlightWindow = 0
    /// The most requests that were in flight at once.
    public var maximumInFlight = 0
    /// When the campaign had already finished, for a run that found it so and sent nothing (seconds since the
    /// epoch); nil for a run that did the work.
    public var finishedEarlierAt: Double?
    /// For a stopped campaign found finished because a replay took over its unsent records: that replay's result
    /// file.
    public var replayedInto: String?

    /// An empty summary of a run that has not started.
    public init() {}

    /// Records that ended with `outcome` in this run; 0 when none did.
    public func count(_ outcome: RecordOutcome) -> Int { outcomeCounts[outcome.caseIndex] }

    /// Counts one more record with `outcome`.
    public mutating func add(_ outcome: RecordOutcome) { outcomeCounts[outcome.caseIndex] += 1 }
}

// MARK: - Report

extension CampaignSummary {
    /// Requests per second over the run.
    public var requestRate: Double { elapsedSeconds > 0 ? Double(requests) / elapsedSeconds : 0 }

    /// Whether this run continued earlier ones (`--resume`): the reports then show the campaign and this run.
    public var isResumed: Bool { earlierRuns.records > 0 }

    /// A few lines for stderr at the end of a run. Outcome counts are the whole campaign's; a resumed run adds a
    /// line with its own. Text that can come from outside (a stop reason, an APNs reason, the results path) is
    /// escaped (`PrintableText`): one line each, nothing a terminal acts on.
    public func text(resultsPath: String?) -> String {
        let campaign = self.campaign
        var lines: [String] = []
        let ofWhich = isResumed ? " (\(records) in this run)" : ""
        if let finishedAt = finishedEarlierAt {
            let when = Date(timeIntervalSince1970: finishedAt).formatted(.iso8601)
            lines.append("already finished at \(when): nothing sent; the campaign's results stand as they were")
            if let replayedInto {
                lines.append(
                    "  it stopped early, and a replay took over its unsent records: \(PrintableText.escaping(replayedInto)) "
                        + "(run that replay's command again to finish it)")
            }
        }
        switch ending {
        case .completed where finishedEarlierAt != nil:
            lines.append("finished: " + CountedNoun.text(campaign.records, "record"))
        case .completed:
            lines.append(
                "finished: " + CountedNoun.text(campaign.records, "record")
                    + "\(ofWhich) in \(String(format: "%.1f", elapsedSeconds)) s")
        case .stoppedEarly(let why): lines.append("STOPPED EARLY: \(PrintableText.escaping(why))")
        case .interrupted: lines.append("interrupted: run the same command again to finish")
        case .deadlinePassed(let when):
            lines.append(
                "DEADLINE PASSED (--not-after \(PrintableText.escaping(when))): \(campaign.count(.expired)) records "
                    + "expired, never sent; do not retry")
        }
        lines.append("  outcomes: " + Self.outcomeList(campaign))
        for (reason, count) in campaign.reasons.sorted(by: Self.byCountThenName).prefix(8) {
            lines.append("    \(PrintableText.escaping(reason)): \(count)")
        }
        if let resultsPath, finishedEarlierAt != nil {
            lines.append("  results: \(PrintableText.escaping(resultsPath))")
            return lines.joined(separator: "\n")
        }
        if isResumed { lines.append("  this run: " + Self.outcomeList(thisRun)) }
        lines.append(
            "  requests: \(requests) (\(CountedNoun.text(retries, "retry", plural: "retries"))), "
                + String(
                    format: "%.0f/s; latency p50 %.1f ms, p99 %.1f ms", requestRate, latencies.percentile(0.5) * 1000,
                    latencies.percentile(0.99) * 1000))
        lines.append(
            "  in flight: at most \(CountedNoun.text(maximumInFlight, "request")) at once; the adaptive limit was \(inFlightWindow) at the end"
        )
        if let resultsPath { lines.append("  results: \(PrintableText.escaping(resultsPath))") }
        return lines.joined(separator: "\n")
    }

    /// The order of every reason breakdown: the most frequent first, ties by name, so two runs print the same.
    static func byCountThenName(_ a: (key: String, value: Int), _ b: (key: String, value: Int)) -> Bool {
        a.value != b.value ? a.value > b.value : a.key < b.key
    }

    private static func outcomeList(_ tally: CampaignTally) -> String {
        let counts = RecordOutcome.allCases.filter { tally.count($0) > 0 }.map { "\($0.rawValue) \(tally.count($0))" }
        return counts.isEmpty ? "none" : counts.joined(separator: ", ")
    }

    /// The summary as JSON (`--summary FILE`): `records`, `outcomes` and `reasons` describe the whole campaign
    /// (every final line in the result file), `this_run` the same figures for this run alone; requests, retries,
    /// timing and latency are this run's.
    public func json(connections: Int) -> [UInt8] {
        var ending: [String: Any] = [:]
        switch self.ending {
        case .completed: ending = ["state": "completed"]
        case .stoppedEarly(let why): ending = ["state": "stopped_early", "reason": why]
        case .interrupted: ending = ["state": "interrupted"]
        case .deadlinePassed(let when): ending = ["state": "deadline_passed", "not_after": when]
        }
        func figures(_ tally: CampaignTally) -> [String: Any] {
            [
                "records": tally.records,
                "outcomes": Dictionary(
                    uniqueKeysWithValues: RecordOutcome.allCases.map { ($0.rawValue, tally.count($0)) }),
                "reasons": tally.reasons,
            ]
        }
        var object = figures(campaign)
        object.merge([
            "ending": ending,
            "this_run": figures(thisRun),
            "resumed": isResumed,
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
        ]) { _, new in new }
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return Array(data) + [0x0A]
    }
}

// MARK: - CampaignTally

/// Final result lines counted by outcome and by "outcome/reason" (e.g. "prune/Unregistered"): what one run wrote,
/// what the runs before a `--resume` wrote, or the whole campaign's result file (their sum).
public struct CampaignTally: Sendable, Equatable {
    /// Records counted.
    public var records = 0
    /// Records per outcome, for the outcomes that occurred.
    public var outcomes: [RecordOutcome: Int] = [:]
    /// Counts by "outcome/reason", e.g. "prune/Unregistered".
    public var reasons: [String: Int] = [:]

    /// An empty tally.
    public init() {}

    /// A tally of the given counts.
    public init(records: Int, outcomes: [RecordOutcome: Int], reasons: [String: Int]) {
        self.records = records
        self.outcomes = outcomes
        self.reasons = reasons
    }

    /// Records counted with `outcome`; 0 when none.
    public func count(_ outcome: RecordOutcome) -> Int { outcomes[outcome, default: 0] }

    /// Counts one final line.
    public mutating func add(outcome: RecordOutcome, reason: String?) {
        records += 1
        outcomes[outcome, default: 0] += 1
        if let reason { reasons["\(outcome.rawValue)/\(reason)", default: 0] += 1 }
    }

    /// The sum of two tallies.
    public static func + (lhs: CampaignTally, rhs: CampaignTally) -> CampaignTally {
        CampaignTally(
            records: lhs.records + rhs.records,
            outcomes: lhs.outcomes.merging(rhs.outcomes, uniquingKeysWith: +),
            reasons: lhs.reasons.merging(rhs.reasons, uniquingKeysWith: +))
    }

    /// Records left to retry: retryable, in doubt or not sent (exit status 3 when the run completed).
    public var leftToRetry: Int { count(.retryable) + count(.inDoubt) + count(.notSent) }
}

extension CampaignSummary {
    /// What this run itself did: records it read and the final lines it wrote.
    public var thisRun: CampaignTally { CampaignTally(records: records, outcomes: outcomes, reasons: reasons) }

    /// The whole campaign: the final lines of the runs this one resumed, plus this run's.
    public var campaign: CampaignTally { earlierRuns + thisRun }
}
