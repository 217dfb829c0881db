import APNSCore
import APNSTransport

/// Runs one campaign on the event-loop thread: pulls records from the reader as stream slots free up, sends the
/// valid ones through the transport, retries what may be retried, stops early when the campaign is failing as a
/// whole, and writes exactly one result line per record.
///
/// Crash safety: a record is journaled as sent before the bytes that carry it are flushed to the network, and
/// every answer is written to the result sink, which is flushed once per loop turn. After a `kill -9` the result
/// file and the journal together say which records are finished, in doubt, or safe to resend.
public final class Dispatcher: PushTransportDelegate {
    public let configuration: DispatchConfiguration

    let reader: any RecordReader
    let sink: any ResultSink
    let transport: any PushTransport
    let scheduler: any DispatchScheduler
    let isFirstOccurrence: (PushNotification) -> Bool
    let resumeStatus: (RecordKey) -> ResumeStatus
    let resumedSends: (RecordKey) -> Int

    var inFlight: [UInt64: PendingSend] = [:]
    var retries = RetryQueue()
    var unprocessedResends: [PendingSend] = []
    var health: CampaignHealth
    var limiter: SendRateLimiter?
    var window: InFlightWindow
    var generator = SystemRandomNumberGenerator()
    var nextTag: UInt64 = 1
    var inputExhausted = false
    var pumpScheduled = false
    var wakeScheduledAt: Double?
    var stopping: DispatchSummary.Ending?
    var closing = false
    var transportClosed = false
    var finished = false
    var startedAt = 0.0
    var fatalError: (any Error)?
    var onFinish: ((DispatchSummary, (any Error)?) -> Void)?
    var onProgress: ((DispatchSummary, _ inFlight: Int) -> Void)?

    /// What the run has done so far.
    public internal(set) var summary = DispatchSummary()

    /// - Parameters:
    ///   - isFirstOccurrence: whether a notification's (token, topic) pair is new in this run (the duplicate
    ///     filter); called once per valid record, in input order, also for records a resumed run skips.
    ///   - resumeStatus: what the run being resumed knew of a record (`.fresh` for a new run).
    ///   - resumedSends: how often the runs being resumed sent a record (the attempts of its in-doubt line).
    public init(
        configuration: DispatchConfiguration,
        reader: any RecordReader,
        sink: any ResultSink,
        transport: any PushTransport,
        scheduler: any DispatchScheduler,
        isFirstOccurrence: @escaping (PushNotification) -> Bool,
        resumeStatus: @escaping (RecordKey) -> ResumeStatus = { _ in .fresh },
        resumedSends: @escaping (RecordKey) -> Int = { _ in 0 }
    ) {
        self.configuration = configuration
        self.reader = reader
        self.sink = sink
        self.transport = transport
        self.scheduler = scheduler
        self.isFirstOccurrence = isFirstOccurrence
        self.resumeStatus = resumeStatus
        self.resumedSends = resumedSends
        self.health = CampaignHealth(threshold: configuration.stopAfterConsecutiveFailures)
        self.limiter = configuration.ratePerSecond.map { SendRateLimiter(perSecond: $0) }
        self.window = InFlightWindow(settings: configuration.window)
        summary.inFlightWindow = window.size
    }

    /// Starts the campaign; `onFinish` runs once, on the loop thread, when every record is accounted for (or the
    /// run was interrupted), with the error that ended it if any. `onProgress` runs whenever `reportProgress()`
    /// is called.
    public func start(
        onProgress: ((DispatchSummary, _ inFlight: Int) -> Void)? = nil,
        onFinish: @escaping (DispatchSummary, (any Error)?) -> Void
    ) {
        self.onFinish = onFinish
        self.onProgress = onProgress
        startedAt = scheduler.now
        transport.delegate = self
        schedulePump()
    }

    /// Stops gracefully (SIGINT/SIGTERM): no new requests; requests in flight are answered or, after the grace
    /// period, reported in doubt; records not yet read are left for `send --resume`.
    public func interrupt() {
        beginStop(.interrupted)
    }

    /// Calls the progress handler with the current counts.
    public func reportProgress() {
        summary.elapsedSeconds = scheduler.now - startedAt
        noteProgressFacts()
        summary.inFlightWindow = window.size
        onProgress?(summary, inFlight.count)
    }

    /// Updates what the progress line shows besides the counts: retries waiting, how far the reader has read.
    func noteProgressFacts() {
        summary.retriesPending = retries.count
        summary.readProgress = reader.readProgress
    }

    // MARK: - PushTransportDelegate

    public func transportHasFreeSlots() {
        schedulePump()
    }

    public func transportFailed(_ error: any Error) {
        beginStop(.stoppedEarly("transport failed: \(error)"))
    }

    public func transportDidClose() {
        transportClosed = true
        finishIfDone()
    }

    public func transport(completed tag: UInt64, outcome: PushOutcome) {
        guard var send = inFlight.removeValue(forKey: tag) else { return }
        summary.latencies.record(max(0, scheduler.now - send.startedAt))
        if case .answered = outcome { window.answered(sentAt: send.startedAt, now: scheduler.now) }
        handle(outcome, for: &send)
        schedulePump()
    }
}
