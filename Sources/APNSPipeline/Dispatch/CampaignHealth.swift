import APNSCore

/// Watches answers for signs that the whole campaign is failing the same way (wrong credentials, a wrong topic
/// for every record) and says when to stop, so a broken run never burns through a million requests.
///
/// A failure that points at the campaign rather than one record counts; a delivered or pruned answer proves the
/// credentials and settings work and clears the count. The campaign stops when `threshold` such failures come
/// in a row.
public struct CampaignHealth: Sendable {
    /// What the sender should do after an answer.
    public enum Verdict: Equatable, Sendable {
        case keepGoing
        /// Stop the campaign; the text names the reason and how often it was seen.
        case stop(String)
    }

    /// The count of consecutive failures that stops the campaign.
    public let threshold: Int
    private var consecutive = 0
    private var lastReason = ""

    /// A health check that stops after `threshold` consecutive failures.
    public init(threshold: Int = 5) {
        self.threshold = max(1, threshold)
    }

    /// Records the action one answer led to, with the APNs reason it carried.
    public mutating func record(_ action: SendAction, reason: APNSReason?) -> Verdict {
        switch action {
        case .delivered, .prune:
            consecutive = 0
            return .keepGoing
        case .stop, .reject(campaignWide: true):
            let name = reason?.rawValue ?? "unexplained rejection"
            if name != lastReason {
                lastReason = name
                consecutive = 0
            }
            consecutive += 1
            guard consecutive >= threshold else { return .keepGoing }
            return .stop("\(name) on \(CountedNoun.text(consecutive, "request")) in a row")
        case .reject(campaignWide: false), .retry, .inDoubt:
            return .keepGoing
        }
    }
}
