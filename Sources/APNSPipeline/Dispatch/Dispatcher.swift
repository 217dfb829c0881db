import APNSCore

/// Runs one campaign on the event-loop thread: holds the I/O (reader, sink, transport, loop, the run's callbacks)
/// and runs what its `DispatcherStateMachine` decides: pulls records from the reader as stream slots free up, sends
/// the valid ones through the transport, retries what may be retried, stops early when the campaign is failing as
/// a whole, and writes exactly one result line per record. It decides nothing itself: every event, each step of a
/// pump turn included, returns a `DispatcherAction`, and the dispatcher runs it.
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
    let answeredBefore: ((PushNotification) -> String?)?
    let sentDigest: ((PushNotification) -> UInt64)?
    /// The configuration's `allowDuplicates`, read once a record (the configuration is large to copy).
    let allowsDuplicates: Bool
    @exclusivity(unchecked)
    var onEnd: ((CampaignSummary, (any Error)?) -> Void)?
    @exclusivity(unchecked)
    var onProgress: ((CampaignSummary, _ inFlight: Int) -> Void)?

    /// Every decision, and every fact they rest on.
    @exclusivity(unchecked)
    var machine: DispatcherStateMachine
    /// Events not handled yet, oldest first. The one being handled stays in the queue until its action has run,
    /// so the queue is empty exactly when no event is being handled and none waits for its loop turn.
    @exclusivity(unchecked)
    private var events: [DispatcherEvent] = []

    /// The settings the dispatcher runs with.
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
    ///   - answeredBefore: for a notification whose (token, topic) pair earlier result files answer for
    ///     (`--skip-delivered`), the detail of its `duplicate` line; nil (the default) looks nothing up.
    ///   - sentDigest: the digest journaled with each send (`SentDigest`, for a run reading a stream); nil (the
    ///     default) journals none.
    public init(
        configuration: DispatcherConfiguration,
        reader: any RecordReader,
        sink: any ResultSink,
        transport: any PushTransport,
        scheduler: any LoopScheduler,
        isFirstOccurrence: @escaping (PushNotification) throws -> Bool,
        resumeStatus: @escaping (RecordKey) -> ResumeStatus = { _ in .fresh },
        resumedSends: @escaping (RecordKey) -> Int = { _ in 0 },
        answeredBefore: ((PushNotification) -> String?)? = nil,
        sentDigest: ((PushNotification) -> UInt64)? = nil
    ) {
        self.reader = reader
        self.sink = sink
        self.transport = transport
        self.scheduler = scheduler
        self.isFirstOccurrence = isFirstOccurrence
        self.resumeStatus = resumeStatus
        self.resumedSends = resumedSends
        self.answeredBefore = answeredBefore
        self.sentDigest = sentDigest
        allowsDuplicates = configuration.allowDuplicates
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
        onProgress?(machine.progress(now: scheduler.now, readProgress: reader.readProgress), machine.inFlight.count)
    }

    // MARK: - PushTransportDelegate

    /// Records the outcome of the send tagged `tag`.
    public func transport(completed tag: UInt64, outcome: consuming PushOutcome) {
        postFromTransport(.completed(tag: tag, outcome: consume outcome, at: scheduler.now))
    }

    /// Sends more records now that the transport has free slots.
    public func transportHasFreeSlots() {
        postFromTransport(.slotsFreed)
    }

    /// Handles a transport failure, stopping the campaign when it cannot go on.
    public func transportFailed(_ error: any Error) {
        postFromTransport(.transportFailed(error))
    }

    /// Finishes the run once the transport has closed.
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
        case .deadlinePassed: run(machine.deadlinePassed(now: scheduler.now))
        case .interrupt: run(machine.stop(.interrupted))
        case .abortInFlight: run(machine.abortInFlight())
        case .completed(let tag, let outcome, let at): run(machine.completed(tag: tag, outcome: outcome, now: at))
        case .slotsFreed: run(machine.slotsFreed(now: scheduler.now))
        case .transportFailed(let error): run(machine.stop(.stoppedEarly("transport failed: \(error)")))
        case .transportClosed: run(machine.transportClosed(now: scheduler.now))
        }
    }
}

// MARK: - Actions

// The I/O the machine's actions stand for; called only from the event loop (`handleEvents`).
extension Dispatcher {
    /// Runs `action` in the order of its fields, then its pump step: the step's event returns the next action,
    /// run the same way, until one has no step (a loop, not a recursion: a pump turn is thousands of steps). A step
    /// that fails ends the run and leads to an empty action.
    func run(_ action: consuming DispatcherAction) {
        // Each action goes straight from the event into `runFields` and only its step is kept: an action is large,
        // and a copy of it costs a `memcpy` call.
        var tag: UInt64 = 0
        var step = runFields(of: action, submitTag: &tag)
        while true {
            switch consume step {
            case .none:
                return
            case .submit(let send):
                step = runFields(of: submit(send, tag: tag), submitTag: &tag)
            case .readRecord:
                step = runFields(of: readRecord(), submitTag: &tag)
            case .endTurn:
                let next = machine.pumpTurnEnded(transportFreeSlots: transport.freeSlots, now: scheduler.now)
                step = runFields(of: next, submitTag: &tag)
            }
        }
    }

    /// Runs the fields of `action` but its pump step, and returns that step (with its `submitTag`). A write or
    /// flush that fails ends the run (`runFailed`): the writes and flushes after it are not done (no request leaves
    /// unjournaled), nor is the pump step (`none` is returned), but its timers, the close and the end's report are,
    /// since the machine has already moved on to them.
    private func runFields(of action: consuming DispatcherAction, submitTag: inout UInt64)
        -> DispatcherAction.PumpStep
    {
        if action.doesOnlyItsPumpStep {  // a pump turn's steps, most actions: no field to look at
            submitTag = action.submitTag
            return action.takePumpStep()
        }
        var failure: (any Error)?
        do {
            try perform(action.writes)
            if let ending = action.thenStop { run(machine.stop(ending)) }
            if action.flushSink { try sink.flush() }
        } catch {
            failure = error
        }
        if failure == nil, let reach = action.expectInFlight { transport.expectInFlight(atMost: reach) }
        if failure == nil, action.flushTransport { transport.flush() }
        switch action.pumpTurn {
        case .none: break
        case .afterQueuedEvents: postAfterQueuedEvents(.pumpTurn)  // asked for while the loop handles the queue
        case .nextLoopTurn: scheduler.schedule(after: 0) { [weak self] in self?.post(.pumpTurn) }
        }
        if let delay = action.wakeUpAfter { scheduler.schedule(after: delay) { [weak self] in self?.post(.wakeUp) } }
        if let delay = action.deadlineAfter {
            scheduler.schedule(after: delay) { [weak self] in self?.post(.deadlinePassed) }
        }
        if let delay = action.gracePeriodAfter {
            scheduler.schedule(after: delay) { [weak self] in self?.post(.gracePeriodEnded) }
        }
        if let failure { fail(failure) }
        switch action.closeTransport {
        case .no: break
        case .now: transport.close(gracePeriod: 0)  // what is still in flight comes back
        case .afterFlushingSink:
            try? sink.flush()
            transport.close(gracePeriod: 0)
        }
        if action.reportEnd {
            onEnd?(machine.report(readProgress: reader.readProgress), machine.runFailure)
            onEnd = nil
        }
        guard failure == nil else { return .none }
        submitTag = action.submitTag
        return action.takePumpStep()
    }

    private func perform(_ writes: borrowing DispatcherAction.RecordWrites) throws {
        switch writes {
        case .none: break
        case .one(let write): try perform(write)
        case .many(let all): for write in all { try perform(write) }
        }
    }

    private func perform(_ write: borrowing DispatcherAction.RecordWrite) throws {
        switch write {
        case .finalResult(let line): try sink.write(line.record)
        case .journalRetryable(let key): try sink.journalRetryable(key)
        }
    }

    /// The files themselves failed: the machine ends the run.
    private func fail(_ error: any Error) {
        run(machine.runFailed(error, now: scheduler.now))
    }

    // MARK: - Pump

    /// One loop turn of work, as the machine's pump steps say: resend what is due, read and send new records while
    /// slots are free, write results of records that need no network, then flush the journal before the network.
    func pump(_ trigger: PumpTrigger) {
        run(machine.pumpTurnBegan(trigger, freeSlots: transport.freeSlots, now: scheduler.now))
    }

    /// The `readRecord` step: reads the next record and tells the machine, with what the duplicate filter and the
    /// run being resumed know of it; nothing when reading failed (the run ends).
    private func readRecord() -> DispatcherAction {
        do {
            guard let record = try reader.nextRecord() else { return machine.inputExhausted() }
            let (firstOccurrence, earlier) = try lookUp(record.content)
            let resume = resumeStatus(record.key)
            let sendsBefore = resume == .inDoubt ? resumedSends(record.key) : 0
            // The record moves into the machine (its last use here), and its notification on into the pending send.
            return machine.recordRead(
                consume record, resume: resume, resumedSends: sendsBefore, firstOccurrence: firstOccurrence,
                answeredBefore: earlier)
        } catch {
            fail(error)
            return DispatcherAction()
        }
    }

    /// What the duplicate filter and earlier result files say of a record's notification: whether its (token,
    /// topic) pair is new in this run, and the detail of its `duplicate` line when earlier files answer for it. The
    /// filter sees every valid record, in input order, also those a resumed run skips. Borrowed: no copy of the
    /// notification.
    private func lookUp(_ content: CampaignRecord.Content) throws -> (Bool, String?) {
        guard case .notification(let notification) = content else { return (true, nil) }
        let firstOccurrence = allowsDuplicates ? true : try isFirstOccurrence(notification)
        return (firstOccurrence, answeredBefore?(notification))
    }

    /// The `submit` step: journals `send` as sent and hands its notification to the transport under `tag`;
    /// nothing when the journal failed (the run ends; the send never left).
    /// A relative expiration is resolved here, at the first send, on the loop's wall clock; the send keeps the
    /// epoch, so a retry sends the same `apns-expiration` and its result line carries it (docs/RUNNING-AGAIN.md).
    private func submit(_ send: consuming PendingSend, tag: UInt64) -> DispatcherAction {
        send.resolveExpiration(atEpoch: scheduler.epochSeconds)
        do {
            if let sentDigest {
                try sink.journalSent(send.key, digest: sentDigest(send.notification))
            } else {
                try sink.journalSent(send.key)
            }
        } catch {
            fail(error)
            return DispatcherAction()
        }
        transport.submit(send.notification, tag: tag)  // borrowed: the send is filed after, not copied for this
        return machine.submitted(send, tag: tag, now: scheduler.now)
    }
}

// MARK: - Configuration

/// How the dispatcher paces, retries and stops a campaign.
public struct DispatcherConfiguration: Sendable {
    /// Back-off and tries in all for 429, 5xx and the like.
    public var retry: ExponentialBackoff = .requests
    /// How often one record may be resent because the server never processed it (refused stream, above a
    /// GOAWAY, connection not up) before it ends `retryable`.
    public var maximumUnprocessedResends = 20
    /// Send later copies of a (token, topic) pair instead of reporting them as duplicates.
    public var allowDuplicates = false
    /// Resend requests whose answer was lost (they may then arrive twice) instead of reporting them in doubt.
    public var resendInDoubt = false
    /// Campaign-level failures in a row (same reason) that stop the campaign.
    public var stopAfterConsecutiveFailures = 5
    /// `BadDeviceToken` or `DeviceTokenNotForTopic` answers for one topic, with no token of it accepted yet, that
    /// stop the campaign: the endpoint's environment or the topic is wrong, not the tokens (`TokenRejectionCheck`).
    public var stopAfterUnconfirmedTokenRejections = 20
    /// Requests started per second at most; nil for as fast as APNs takes them.
    public var ratePerSecond: Double?
    /// After a stop, how long to wait for answers to requests in flight before reporting them in doubt.
    public var drainGracePeriod: Double = 15
    /// Records read per loop turn at most, so a long run of invalid records cannot starve the network.
    public var maximumRecordsPerTurn = 4096
    /// How the in-flight window (requests in flight across all connections) starts, grows and is capped;
    /// `window.maximum` is `--max-in-flight`.
    public var window = InFlightWindow.Settings()
    /// The campaign's `--not-after` deadline, if it has one: nothing new is sent from then on, and what was not
    /// sent ends `expired`.
    public var notAfter: SendDeadline?

    /// The default settings.
    public init() {}
}
