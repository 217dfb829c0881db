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
