/// What the progress line says at one moment of a run: counts so far, the request rate, requests in flight
/// (and the in-flight window, where the dispatcher has one), retries waiting, and how far the inputs are read,
/// from which the percentage done and the time left follow.
public struct ProgressSnapshot: Sendable, Equatable {
    public var elapsedSeconds: Double
    /// Records read so far.
    public var records: Int
    public var delivered: Int
    public var pruned: Int
    public var invalid: Int
    /// Records that ended retryable, in doubt or not sent: what `replay` sends again.
    public var failed: Int
    public var requests: Int
    public var requestsPerSecond: Double
    public var inFlight: Int
    /// The most requests the dispatcher lets be in flight now; nil when it has no such window.
    public var window: Int?
    /// Sends waiting for their back-off.
    public var retriesPending: Int
    /// How far the inputs are read; nil for standard input and replays.
    public var read: ReadProgress?

    public init(
        elapsedSeconds: Double, records: Int, delivered: Int, pruned: Int, invalid: Int, failed: Int, requests: Int,
        requestsPerSecond: Double, inFlight: Int, window: Int? = nil, retriesPending: Int, read: ReadProgress? = nil
    ) {
        self.elapsedSeconds = elapsedSeconds
        self.records = records
        self.delivered = delivered
        self.pruned = pruned
        self.invalid = invalid
        self.failed = failed
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
            pruned: summary.count(.prune), invalid: summary.count(.inputError),
            failed: summary.count(.retryable) + summary.count(.inDoubt) + summary.count(.notSent),
            requests: summary.requests, requestsPerSecond: summary.requestRate, inFlight: inFlight, window: window,
            retriesPending: summary.retriesPending, read: summary.readProgress)
    }

    /// 0 ... 1 when the inputs' size is known.
    public var fractionDone: Double? { read?.fraction }

    /// Seconds left at the pace so far, when the inputs' size is known and some of it has been read.
    public var secondsLeft: Double? {
        guard let fraction = fractionDone, fraction > 0, elapsedSeconds > 0 else { return nil }
        return elapsedSeconds * (1 - fraction) / fraction
    }
}
