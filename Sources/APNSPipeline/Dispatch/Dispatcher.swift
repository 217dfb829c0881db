import APNSCore

/// Runs one campaign on the event-loop thread: holds the I/O (reader, sink, transport, loop, the run's callbacks)
/// and runs what its `DispatcherStateMachine` decides: pulls records from the reader as stream slots free up, sends
/// the valid ones through the transport, retries what may be retried, stops early when the campaign is failing as
/// a whole, and writes exactly one result line per record.
///
/// Nothing in it is re-entrant, by design: every event (a transport callback, a timer, a signal) is queued, and
/// one loop (`handleEvents`) hands them to the machine in order and runs each one's action before the next. A
/// transport callback only queues its event; the loop runs on a later loop turn, never inside the transport's
/// callback, so the transport is only ever called from the loop. A callback the transport makes from inside such
/// a call (`close` answers what it holds at once) is handled after the call returns. The queue itself says whether
/// a loop is running or due (it is empty only when neither is): no flag or depth counter beside it.
///
/// Crash safety: a record is journaled as sent before the bytes that carry it are flushed to the network, and
/// every answer is written to the result sink, which is flushed once per loop turn. After a `kill -9` the result
/// file and the journal together say which records are finished, in doubt, or safe to resend.
public final class Dispatcher: PushTransportDelegate {
    let reader: any RecordReader
    let sink: any ResultSink
    let transport: any PushTransport
    let scheduler: any LoopScheduler
    let isFirstOccurrence: (PushNotification) throws -> Bool
    let resumeStatus: (RecordKey) -> ResumeStatus
    let resumedSends: (RecordKey) -> Int
    var onEnd: ((CampaignSummary, (any Error)?) -> Void)?
    var onProgress: ((CampaignSummary, _ inFlight: Int) -> Void)?

    /// Every decision, and every fact they rest on.
    var machine: DispatcherStateMachine
    /// Events not handled yet, oldest first. The one being handled stays in the queue until its action has run,
    /// so the queue is empty exactly when no event is being handled and none waits for its loop turn.
    private var events: [DispatcherEvent] = []

    public var configuration: DispatcherConfiguration { machine.configuration }
    /// What the run has done so far.
    public var summary: CampaignSummary { machine.summary }
    /// The in-flight window as it stands.
    var window: InFlightWindow { machine.window }

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
        self.reader = reader
        self.sink = sink
        self.transport = transport
        self.scheduler = scheduler
        self.isFirstOccurrence = isFirstOccurrence
        self.resumeStatus = resumeStatus
        self.resumedSends = resumedSends
        machine = DispatcherStateMachine(configuration: configuration)
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
        transport.delegate = self
        post(.start)
    }

    /// Stops gracefully (SIGINT/SIGTERM): no new requests; requests in flight are answered or, after the grace
    /// period, reported in doubt; records not yet read are left for `send --resume`.
    public func interrupt() {
        post(.interrupt)
    }

    /// A second interrupt: stop waiting for answers; requests still in flight are reported in doubt now.
    public func abortInFlight() {
        post(.abortInFlight)
    }

    /// Calls the progress handler with the current counts.
    public func reportProgress() {
        let progress = machine.progress(now: scheduler.now, readProgress: reader.readProgress)
        onProgress?(progress.summary, progress.inFlight)
    }

    // MARK: - PushTransportDelegate

    public func transport(completed tag: UInt64, outcome: PushOutcome) {
        postFromTransport(.completed(tag: tag, outcome: outcome, at: scheduler.now))
    }

    public func transportHasFreeSlots() {
        postFromTransport(.slotsFreed)
    }

    public func transportFailed(_ error: any Error) {
        postFromTransport(.transportFailed(error))
    }

    public func transportDidClose() {
        postFromTransport(.transportClosed)
    }
}

// MARK: - Events

extension Dispatcher {
    /// Queues an event of the dispatcher's own (a timer, a signal, the start); handles it now when nothing else
    /// is queued. These never arrive from inside a transport call.
    func post(_ event: consuming DispatcherEvent) {
        events.append(event)
        if events.count == 1 { handleEvents() }
    }

    /// Queues an event from the transport. It is handled by the loop already running (the callback came from
    /// inside a transport call the loop made), or by one on the next loop turn: never from inside the callback.
    private func postFromTransport(_ event: consuming DispatcherEvent) {
        events.append(event)
        if events.count == 1 { scheduler.schedule(after: 0) { [weak self] in self?.handleEvents() } }
    }

    /// Queues an event behind those queued now, for the loop that is handling them (`DispatcherAction.PumpTurn`'s
    /// `afterQueuedEvents`).
    func postAfterQueuedEvents(_ event: consuming DispatcherEvent) {
        events.append(event)
    }

    /// Hands the queued events to the machine in order, running each one's action before the next; events
    /// queued meanwhile are handled in the same loop.
    private func handleEvents() {
        var index = 0
        while index < events.count {
            var event = DispatcherEvent.slotsFreed  // moved out, a payload-free event left in its place: no copy
            swap(&event, &events[index])
            handle(event)
            index += 1
        }
        events.removeAll(keepingCapacity: true)
    }

    private func handle(_ event: DispatcherEvent) {
        switch event {
        case .start: run(machine.start(now: scheduler.now))
        case .pumpTurn: pump(.pumpTurn)
        case .wakeUp: pump(.wakeUp)
        case .gracePeriodEnded: run(machine.gracePeriodEnded())
        case .interrupt: run(machine.stop(.interrupted))
        case .abortInFlight: run(machine.abortInFlight())
        case .completed(let tag, let outcome, let at): run(machine.completed(tag: tag, outcome: outcome, now: at))
        case .slotsFreed: run(machine.slotsFreed(now: scheduler.now))
        case .transportFailed(let error): run(machine.stop(.stoppedEarly("transport failed: \(error)")))
        case .transportClosed: run(machine.transportClosed(now: scheduler.now))
        }
    }
}
