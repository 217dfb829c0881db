import APNSCore

/// Runs one campaign on the event-loop thread: pulls records from the reader as stream slots free up, sends the
/// valid ones through the transport, retries what may be retried, stops early when the campaign is failing as a
/// whole, and writes exactly one result line per record.
///
/// Its lifecycle is one `DispatcherPhase`. Transport callbacks never call back into the transport: the calls they
/// lead to (pump, close) are `DeferredEffect`s run on the next loop turn.
///
/// Crash safety: a record is journaled as sent before the bytes that carry it are flushed to the network, and
/// every answer is written to the result sink, which is flushed once per loop turn. After a `kill -9` the result
/// file and the journal together say which records are finished, in doubt, or safe to resend.
public final class Dispatcher: PushTransportDelegate {
    public let configuration: DispatcherConfiguration

    let reader: any RecordReader
    let sink: any ResultSink
    let transport: any PushTransport
    let scheduler: any LoopScheduler
    let isFirstOccurrence: (PushNotification) throws -> Bool
    let resumeStatus: (RecordKey) -> ResumeStatus
    let resumedSends: (RecordKey) -> Int

    var inFlight = InFlightTable()
    var retries = RetryQueue()
    var unprocessedResends: [PendingSend] = []
    var health: CampaignHealth
    var limiter: SendRateLimiter?
    var window: InFlightWindow
    var generator = SystemRandomNumberGenerator()
    /// The run's lifecycle: sending, stopping, closing the transport, ended.
    var phase = DispatcherPhase()
    /// Transport calls waiting for the next loop turn (see `Dispatcher+Effects.swift`).
    var deferredEffects: [DeferredEffect] = []
    /// How many transport callbacks the dispatcher is inside (more than one when a callback nests in another).
    var transportCallbackDepth = 0
    var wakeScheduledAt: Double?
    var startedAt = 0.0
    /// The failure of the files themselves that ended the run, if any (the first one).
    var runFailure: (any Error)?
    var onEnd: ((CampaignSummary, (any Error)?) -> Void)?
    var onProgress: ((CampaignSummary, _ inFlight: Int) -> Void)?

    /// What the run has done so far.
    public internal(set) var summary = CampaignSummary()

    /// - Parameters:
    ///   - isFirstOccurrence: whether a notification's (token, topic) pair is new in this run (the duplicate
    ///     filter); called once per valid record, in input order, also for records a resumed run skips; an error
    ///     it throws (the filter's scratch file failed) ends the run.
    ///   - resumeStatus: what the run being resumed knew of a record (`.fresh` for a new run).
    ///   - resumedSends: how often the runs being resumed sent a record (the attempts of its in-doubt line).
    public init(
        configuration: DispatcherConfiguration,
        reader: any RecordReader,
        sink: any ResultSink,
        transport: any PushTransport,
        scheduler: any LoopScheduler,
        isFirstOccurrence: @escaping (PushNotification) throws -> Bool,
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

    /// Starts the campaign; `onEnd` runs once, on the loop thread, when every record is accounted for (or the
    /// run was interrupted), with the error that ended it if any. `onProgress` runs whenever `reportProgress()`
    /// is called.
    public func start(
        onProgress: ((CampaignSummary, _ inFlight: Int) -> Void)? = nil,
        onEnd: @escaping (CampaignSummary, (any Error)?) -> Void
    ) {
        self.onEnd = onEnd
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
        handlingTransportCallback { beginStop(.stoppedEarly("transport failed: \(error)")) }
    }

    public func transportDidClose() {
        handlingTransportCallback {
            phase.transportDidClose()
            endIfSettled()
        }
    }

    public func transport(completed tag: UInt64, outcome: PushOutcome) {
        guard let sentAt = inFlight.sentAt(tag: tag), var send = inFlight.remove(tag: tag) else { return }
        handlingTransportCallback {
            let now = scheduler.now  // one clock read for both
            summary.latencies.record(max(0, now - sentAt))
            if case .answered = outcome { window.answered(sentAt: sentAt, now: now) }
            handle(outcome, for: &send)
            schedulePump()
        }
    }
}
