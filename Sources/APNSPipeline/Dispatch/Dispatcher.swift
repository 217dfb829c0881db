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
    /// Transport calls waiting for the next loop turn (see the `Effects` section below).
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

// MARK: - Pump

extension Dispatcher {
    /// One loop turn of work: resend what is due, read and send new records while slots are free, write results
    /// of records that need no network, then flush the journal before the network.
    func pump() {
        guard !phase.hasEnded else { return }
        let freeSlots = phase.closingTransport ? 0 : transport.freeSlots
        var budget = min(freeSlots, max(0, window.size - inFlight.count))
        if let rate = limiter, budget > 0 {
            var limiter = rate
            budget = limiter.take(upTo: budget, now: scheduler.now)
            self.limiter = limiter
        }
        var submitted = 0
        do {
            while budget > submitted, !unprocessedResends.isEmpty {
                try submit(unprocessedResends.removeLast())
                submitted += 1
            }
            while budget > submitted, let due = retries.popDue(now: scheduler.now) {
                try submit(due)
                submitted += 1
            }
            var read = 0
            while phase.readsSource, read < configuration.maximumRecordsPerTurn,
                  !phase.sends || budget > submitted {
                guard let record = try reader.nextRecord() else {
                    phase.inputExhausted()
                    break
                }
                read += 1
                if try take(record) { submitted += 1 }
            }
            if read == configuration.maximumRecordsPerTurn { schedulePump() }
            try sink.flush()
        } catch {
            failRun(error)
            return
        }
        if submitted > 0 {
            summary.requests += submitted
            transport.flush()
        }
        noteWindow(capacity: inFlight.count + freeSlots - submitted)
        scheduleWakeUp()
        endIfSettled()
    }

    /// Handles one record read from the reader, as `RecordDecision` decides; returns whether it was submitted.
    private func take(_ record: consuming CampaignRecord) throws -> Bool {
        // The duplicate filter sees every valid record, in input order, also those a resumed run skips.
        var firstOccurrence = true
        if !configuration.allowDuplicates, case .notification(let notification) = record.content {
            firstOccurrence = try isFirstOccurrence(notification)
        }
        let resume = resumeStatus(record.key)
        let sendsBefore = resume == .inDoubt ? resumedSends(record.key) : 0
        let decision = RecordDecision(configuration: configuration, stopCause: phase.stopCause)
        // The record moves into the decision (its last use here), and its notification on into the pending send.
        let effect = decision.effect(
            for: consume record, resume: resume, resumedSends: sendsBefore, firstOccurrence: firstOccurrence)
        summary.records += effect.recordCountChange
        // Consumed, so the pending send moves from the decision into the in-flight table without a copy.
        switch consume effect {
        case .skip:
            return false
        case .writeFinalResult(let result):
            try writeFinalResult(result)
            return false
        case .submit(let send):
            try submit(send)
            return true
        }
    }

    /// Journals `send` as sent, files it in flight under a new tag, and hands its notification to the transport.
    func submit(_ send: consuming PendingSend) throws {
        try sink.journalSent(send.key)
        let tag = inFlight.reserveTag()
        transport.submit(send.notification, tag: tag)  // borrowed: the send is filed after, not copied for this
        inFlight.file(send, under: tag, sentAt: scheduler.now)
    }

    /// Tells the window how full it is and how many slots the transport offered, and keeps the summary's figures.
    private func noteWindow(capacity: Int) {
        guard !phase.closingTransport else { return }
        window.observe(inFlight: inFlight.count, capacity: capacity)
        summary.inFlightWindow = window.size
        summary.maximumInFlight = max(summary.maximumInFlight, inFlight.count)
    }

    /// Wakes the loop when waiting work can go: when the next retry falls due, and no sooner than the rate
    /// limiter allows. Work that waits only for a stream slot needs no wake-up (a slot freeing up pumps), and a
    /// wake-up that could not send anything would only spin.
    func scheduleWakeUp() {
        guard !phase.closingTransport else { return }
        let now = scheduler.now
        var readyAt: Double?
        if !unprocessedResends.isEmpty || (phase.inputOpen && phase.sends) { readyAt = now }
        if let due = retries.nextDue { readyAt = min(readyAt ?? due, max(now, due)) }
        guard var wakeAt = readyAt else { return }
        if wakeAt <= now, transport.freeSlots == 0 || inFlight.count >= window.size { return }
        if var rate = limiter {
            wakeAt = max(wakeAt, now + rate.delayUntilNext(now: now))
            limiter = rate
        }
        let delay = wakeAt - now
        if let scheduled = wakeScheduledAt, scheduled <= wakeAt, scheduled > now { return }
        wakeScheduledAt = wakeAt
        scheduler.schedule(after: delay) { [weak self] in
            guard let self else { return }
            if let scheduled = self.wakeScheduledAt, scheduled <= self.scheduler.now { self.wakeScheduledAt = nil }
            self.pump()
        }
    }
}

// MARK: - Outcome

extension Dispatcher {
    /// Acts on one answer or transport failure, as `OutcomePolicy` decides.
    func handle(_ outcome: PushOutcome, for send: inout PendingSend) {
        let action = OutcomePolicy.action(for: outcome)
        var reason: APNSReason?
        switch outcome {
        case .answered(let answer):
            send.attempts += 1
            send.recordAnswer(status: answer.status, reason: answer.reason?.rawValue)
            reason = answer.reason
        case .failed(let failure):
            if action == .retry(.immediately) { send.unprocessed += 1 } else { send.attempts += 1 }
            send.recordFailure(detail: failure.description)
        }
        let verdict = health.record(action, reason: reason)
        let decision = AnswerDecision(configuration: configuration, stopCause: phase.stopCause, sends: phase.sends)
        do {
            try carryOut(decision.effect(of: action, answer: outcome.answer, send: send, using: &generator))
        } catch {
            failRun(error)  // the transport closes on the next turn, after this callback has returned
            return
        }
        if case .stop(let why) = verdict { beginStop(.stoppedEarly(why)) }
    }

    private func carryOut(_ effect: consuming AnswerDecision.Effect) throws {
        switch consume effect {  // what it holds moves out, not copied
        case .writeFinalResult(let result):
            try writeFinalResult(result)
        case .retryLater(let send, let delay):
            summary.retries += 1
            try sink.journalRetryable(send.key)
            retries.push(send, due: scheduler.now + delay)
        case .leaveForResume(let key):
            try sink.journalRetryable(key)  // `send --resume` sends it again
        case .resendUnprocessed(let send):
            summary.retries += 1  // a resend is a retry, whether or not the server processed the first request
            unprocessedResends.append(send)
        }
    }

    func result(for send: PendingSend, outcome: RecordOutcome, detail: String?) -> ResultRecord {
        send.finalResult(outcome, detail: detail)
    }

    /// Writes a record's final line and counts it.
    func writeFinalResult(_ result: ResultRecord) throws {
        summary.add(result.outcome)
        if result.isRejectedByAPNs { summary.rejected += 1 }
        if let reason = result.reason {
            summary.reasons["\(result.outcome.rawValue)/\(reason)", default: 0] += 1
        }
        try sink.write(result)
    }
}

// MARK: - Stop

extension Dispatcher {
    /// Stops starting new work. The first cause wins, except that an interrupt during an early stop is ignored
    /// (the early stop already ends every record).
    func beginStop(_ ending: CampaignSummary.Ending) {
        guard phase.stop(ending) else { return }
        let waiting = retries.drain() + unprocessedResends
        unprocessedResends = []
        do {
            for send in waiting {
                if ending == .interrupted {
                    try sink.journalRetryable(send.key)
                } else {
                    try writeFinalResult(result(for: send, outcome: send.outcomeWithoutAnswer, detail: send.lastDetail ?? "campaign stopped"))
                }
            }
            try sink.flush()
        } catch {
            failRun(error)
            return
        }
        if !inFlight.isEmpty {
            scheduler.schedule(after: configuration.drainGracePeriod) { [weak self] in
                self?.closeTransport()  // what is still in flight comes back as answer lost
            }
        }
        schedulePump()
    }

    /// Ends the run after a failure of the files themselves (unreadable input, a full disk): nothing new is
    /// read or sent, and the transport closes on the next loop turn, reporting requests that never left as not
    /// sent. Never closes it from here: this may run inside the transport's own answer callback.
    func failRun(_ error: any Error) {
        if runFailure == nil { runFailure = error }
        _ = phase.stop(.stoppedEarly("\(error)"))
        phase.inputExhausted()
        retries = RetryQueue()
        unprocessedResends = []
        closeTransport()
        endIfSettled()
    }

    /// Ends the run once every record read is accounted for and the transport has closed: closes the transport
    /// when the work is done, then reports the summary once it said it closed.
    func endIfSettled() {
        guard !phase.hasEnded, !phase.readsSource else { return }
        guard inFlight.isEmpty, retries.isEmpty, unprocessedResends.isEmpty else { return }
        if !phase.closingTransport {
            try? sink.flush()
            closeTransport()
            return  // transportDidClose calls back here
        }
        guard phase.transportClosed, let ending = phase.end() else { return }
        do {
            try sink.flush()
        } catch {
            if runFailure == nil { runFailure = error }
        }
        summary.ending = ending
        summary.elapsedSeconds = scheduler.now - startedAt
        noteProgressFacts()
        onEnd?(summary, runFailure)
        onEnd = nil
    }

    /// A second interrupt: stop waiting for answers; requests still in flight are reported in doubt now.
    public func abortInFlight() {
        beginStop(.interrupted)
        closeTransport()
    }
}

// MARK: - Effects

/// A call the dispatcher owes the transport, run on the next loop turn rather than where it was decided.
///
/// Answers arrive inside the transport's own callbacks (a socket read, or a `close` that answers what it holds).
/// Calling the transport back from there would re-enter it mid-delivery: a pool closed from inside its answer
/// callback can no longer tell requests that never left from requests whose answer was lost. So calls decided
/// inside a callback are queued here, and run once the callback has returned (`transportCallbackDepth` says
/// where the dispatcher is).
enum DeferredEffect: Equatable {
    /// Send what the free slots and the window allow, read records, flush.
    case pump
    /// Close the transport now: what it holds comes back (never sent: `notSent`; sent: `answerLost`), then
    /// `transportDidClose`.
    case closeTransport
}

extension Dispatcher {
    /// Queues `effect` (once) for the next loop turn.
    func schedule(_ effect: DeferredEffect) {
        guard !phase.hasEnded, !deferredEffects.contains(effect) else { return }
        deferredEffects.append(effect)
        guard deferredEffects.count == 1 else { return }  // the turn that runs the first one runs them all
        scheduler.schedule(after: 0) { [weak self] in self?.runDeferredEffects() }
    }

    /// Runs the queued effects in order; effects they queue wait for the following turn.
    private func runDeferredEffects() {
        let effects = deferredEffects
        deferredEffects = []
        for effect in effects where !phase.hasEnded {
            switch effect {
            case .pump: pump()
            case .closeTransport: transport.close(gracePeriod: 0)  // what is still in flight comes back
            }
        }
    }

    func schedulePump() {
        schedule(.pump)
    }

    /// Moves to closing and closes the transport: at once from the dispatcher's own code (a pump, a timer), so
    /// that requests submitted but not yet flushed never leave without their journal entry; on the next loop turn
    /// from inside a transport callback. A close still waiting from a callback runs now if asked for again here.
    func closeTransport() {
        let newlyClosing = phase.closeTransport()
        if transportCallbackDepth > 0 {
            if newlyClosing { schedule(.closeTransport) }
        } else if newlyClosing || deferredEffects.contains(.closeTransport) {
            deferredEffects.removeAll { $0 == .closeTransport }
            transport.close(gracePeriod: 0)  // what is still in flight comes back
        }
    }

    /// Runs `body` as the handling of one transport callback: transport calls it leads to wait for the next turn.
    func handlingTransportCallback(_ body: () -> Void) {
        transportCallbackDepth += 1
        defer { transportCallbackDepth -= 1 }
        body()
    }
}

// MARK: - DispatcherConfiguration

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
    /// Requests started per second at most; nil for as fast as APNs takes them.
    public var ratePerSecond: Double?
    /// After a stop, how long to wait for answers to requests in flight before reporting them in doubt.
    public var drainGracePeriod: Double = 15
    /// Records read per loop turn at most, so a long run of invalid records cannot starve the network.
    public var maximumRecordsPerTurn = 4096
    /// How the in-flight window (requests in flight across all connections) starts, grows and is capped;
    /// `window.maximum` is `--max-in-flight`.
    public var window = InFlightWindow.Settings()

    public init() {}
}
