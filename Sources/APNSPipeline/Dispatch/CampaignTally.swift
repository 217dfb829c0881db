import APNSCore

/// Final result lines counted by outcome and by "outcome/reason" (e.g. "prune/Unregistered"): what one run wrote,
/// what the runs before a `--resume` wrote, or the whole campaign's result file (their sum).
public struct CampaignTally: Sendable, Equatable {
    /// Records counted.
    public var records = 0
    public var outcomes: [RecordOutcome: Int] = [:]
    public var reasons: [String: Int] = [:]

    public init() {}

    public init(records: Int, outcomes: [RecordOutcome: Int], reasons: [String: Int]) {
        self.records = records
        self.outcomes = outcomes
        self.reasons = reasons
    }

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
