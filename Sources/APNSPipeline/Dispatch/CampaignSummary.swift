import APNSCore

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
    }

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
    private var outcomeCounts = InlineArray<7, Int>(repeating: 0)
    /// Counts by "outcome/reason", e.g. "prune/Unregistered".
    public var reasons: [String: Int] = [:]
    public var records = 0
    /// Records sent and refused by APNs as a bad request: the `input_error` lines that carry an answer (the rest
    /// were invalid in the file and never sent).
    public var rejected = 0
    public var requests = 0
    public var retries = 0
    public var latencies = LatencyHistogram()
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

    public init() {}

    public func count(_ outcome: RecordOutcome) -> Int { outcomeCounts[outcome.caseIndex] }

    /// Counts one more record with `outcome`.
    public mutating func add(_ outcome: RecordOutcome) { outcomeCounts[outcome.caseIndex] += 1 }
}
