// The run's lifecycle (`state`). Every event is a mutating method that returns the one action value,
// `DispatcherAction` (possibly empty): the lifecycle's events as much as each step of a pump turn.
//
//                   stop(cause)                            transport to close
//    +-----------+ -------------> +-------------------+ ---------------------> +---------------------------+
//    |  sending  |                |  stopping         |   (grace period over,  |  closingTransport         |
//    | inputOpen |                |  cause, inputOpen |    abortInFlight,      |  cause?, inputOpen,       |
//    +-----------+                +-------------------+    runFailed, settled) |  closed                   |
//          |                                                                   +---------------------------+
//          |      settled: every record read and answered, no cause                 ^              |
//          +------------------------------------------------------------------------+              |
//                                                                      transportClosed sets closed;|
//                                                                      once settled: reportEnd     v
//                                                                                            +---------+
//                                                                                            |  ended  |
//                                                                                            +---------+
//
//  - A stop's cause: `--stop-after` rejections in a row, the transport failing, an interrupt, `runFailed` (the
//    files themselves failed), or the `--not-after` deadline (its timer, or a start past it). The first cause wins; a stop while closing without a cause sets it.
//  - `inputExhausted` clears `inputOpen` in any state but `ended`; `transportClosed` in `sending` or `stopping`
//    (the transport closed by itself) goes straight to `closingTransport` with `closed` set.
//  - Settled: nothing more is read, nothing is in flight, waiting for a retry or to be resent. Then the transport
//    is closed (no cause yet), and once it said it closed the end is reported, once.
//
// A pump turn (in any state but `ended`) is a run of steps, each an event whose action names the next step
// (`DispatcherAction.pumpStep`); the shell runs the step and feeds in the event it leads to:
//
//    pumpTurnBegan --+--> submit(send), tag --- the shell journals it, hands it to the transport ----> submitted
//    submitted ------+--> readRecord ----------- the shell reads the reader ----> recordRead | inputExhausted
//    recordRead -----+--> endTurn (flushSink) -- the shell flushes the sink -----> pumpTurnEnded (no step)
//    inputExhausted -+
//
//  - Sends waiting (resends first, then retries due) are submitted while the budget lasts and the turn has read no
//    record; then records are read while `readsRecord`. A record that needs a request when none is left to spare
//    waits for a slot (`park`), first of the sends waiting.
//
// Besides the lifecycle the machine keeps the pump's budget (free slots, the in-flight window, the rate limit),
// the pump turn under way (`PumpTurnTally`), the work waiting (in flight, retries, resends), the kept values of
// records not finished, and the loop turns it asked for (`LoopTimers`).

import APNSCore

/// The dispatcher's decisions without I/O: its lifecycle, what may be sent and read each loop turn, when the loop
/// wakes next, what each answer leads to, how a stop and the end go. `Dispatcher` feeds it events and runs the
/// `DispatcherAction` each returns; tests drive it directly, with instants of their own. Its state is
/// `private(set)`: only its own events change it.
struct DispatcherStateMachine {
    typealias Ending = CampaignSummary.Ending

    /// The run's lifecycle, each phase with what it still needs to know.
    enum State: Equatable {
        /// Reading records and sending them (`inputOpen` false: every record is read; answers and retries are
        /// still awaited).
        case sending(inputOpen: Bool)
        /// A stop began: no new requests; requests in flight are still awaited. After an early stop the reader
        /// is still read to the end, to write `not_sent` lines; after an interrupt it is not read at all.
        case stopping(Ending, inputOpen: Bool)
        /// The transport was asked to close (`closed`: it said it has); nothing more is sent.
        case closingTransport(Ending?, inputOpen: Bool, closed: Bool)
        /// The run's end was reported; nothing happens any more.
        case ended
    }

    /// The loop turns the machine asked the dispatcher to schedule and has not yet seen run: not a phase of the
    /// run but bookkeeping of timers, so that requests for the same turn are merged into one.
    struct LoopTimers {
        /// A pump turn is asked for and has not begun yet.
        var pumpTurnScheduled = false
        /// The loop turn (its instant) the last pump turn began in: answers that come back in it ask for the
        /// next pump on the next loop turn, so one loop turn never pumps in a loop.
        var lastPumpAt: Double?
        /// When the scheduled wake-up falls due, if one is.
        var wakeUpAt: Double?
    }

    let configuration: DispatcherConfiguration
    private(set) var state = State.sending(inputOpen: true)
    /// The pump turn under way, from `pumpTurnBegan` to `pumpTurnEnded` (nil between turns): not a phase of the
    /// run, since a turn runs in any state but `ended`.
    private(set) var turn: PumpTurnTally?
    /// Sends in flight, each with when it went out.
    private(set) var inFlight = InFlightTable()
    /// Sends waiting for their back-off.
    private(set) var retries = RetryQueue()
    /// Sends waiting for a slot: those the server never processed, and the record read while no request could
    /// go (`park`).
    private(set) var unprocessedResends: [PendingSend] = []
    /// The `--keep` values of records sent or waiting and not finished yet, by `RecordKey.packed`, put into their
    /// final line (a pending send carries none: it stays within 128 bytes). Empty when the run keeps no fields.
    private(set) var keptBySend: [UInt64: KeptValues] = [:]
    private(set) var health: CampaignHealth
    /// Rejections of tokens held back until their topic is confirmed.
    private(set) var tokenRejections: TokenRejectionCheck
    private(set) var limiter: SendRateLimiter?
    private(set) var window: InFlightWindow
    /// The window's reach the transport was last told (`DispatcherAction.expectInFlight`); nil before the first.
    private var announcedReach: Int?
    private(set) var generator = SystemRandomNumberGenerator()
    private(set) var timers = LoopTimers()
    private(set) var startedAt = 0.0
    /// The failure of the files themselves that ended the run, if any (the first one; the end's own flush counts).
    private(set) var runFailure: (any Error)?
    /// What the run has done so far: each final line is counted as the machine has it written.
    private(set) var summary = CampaignSummary()

    init(configuration: DispatcherConfiguration) {
        self.configuration = configuration
        health = CampaignHealth(threshold: configuration.stopAfterConsecutiveFailures)
        tokenRejections = TokenRejectionCheck(limit: configuration.stopAfterUnconfirmedTokenRejections)
        limiter = configuration.ratePerSecond.map { SendRateLimiter(perSecond: $0) }
        window = InFlightWindow(settings: configuration.window)
        summary.inFlightWindow = window.size
    }

    // MARK: - Events outside the pump

    /// The run starts: the first pump turn is scheduled.
    mutating func start(now: Double) -> DispatcherAction {
        startedAt = now
        if let deadline = configuration.notAfter, deadline.at <= now { return stop(.deadlinePassed(deadline.text)) }
        var action = DispatcherAction()
        action.deadlineAfter = configuration.notAfter.map { $0.at - now }
        requestPumpTurn(&action)
        return action
    }

    /// The `--not-after` deadline's timer fired, at `now`: while the run still sends, it stops for the deadline
    /// (records not sent end `expired`, requests in flight are awaited as after any stop). Nothing once the run
    /// stopped for another cause or has done its work.
    mutating func deadlinePassed(now: Double) -> DispatcherAction {
        guard let deadline = configuration.notAfter, sends else { return DispatcherAction() }
        guard now >= deadline.at else {
            var action = DispatcherAction()
            action.deadlineAfter = deadline.at - now  // a timer that fired early
            return action
        }
        return stop(.deadlinePassed(deadline.text))
    }

    /// The transport has free slots, at `now`: a pump turn (once), after the events queued now.
    mutating func slotsFreed(now: Double) -> DispatcherAction {
        var action = DispatcherAction()
        requestPumpTurn(&action, afterQueuedEventsAt: now)
        return action
    }

    // MARK: - Queries, for reports only

    /// The counts for a progress line, as of `now`, with how far the reader has read (`readProgress`).
    func progress(now: Double, readProgress: ReadProgress?) -> CampaignSummary {
        var progress = report(readProgress: readProgress)
        progress.elapsedSeconds = now - startedAt
        progress.inFlightWindow = window.size
        return progress
    }

    /// The summary with what it shows besides the counts: retries waiting, how far the reader has read.
    func report(readProgress: ReadProgress?) -> CampaignSummary {
        var report = summary
        report.retriesPending = retries.count
        report.readProgress = readProgress
        return report
    }

    /// Why the run is ending, once a stop began (nil while it runs to completion).
    var stopCause: Ending? {
        switch state {
        case .sending, .ended: return nil
        case .stopping(let ending, _): return ending
        case .closingTransport(let ending, _, _): return ending
        }
    }

    /// Whether new records may still be read from the reader.
    var readsSource: Bool {
        switch state {
        case .sending(let open): return open
        case .stopping(let ending, let open), .closingTransport(let ending?, let open, _):
            return open && ending != .interrupted
        case .closingTransport(nil, let open, _): return open
        case .ended: return false
        }
    }

    /// Whether the reader still has records (reading may be paused by an interrupt).
    var inputOpen: Bool {
        switch state {
        case .sending(let open), .stopping(_, let open), .closingTransport(_, let open, _): return open
        case .ended: return false
        }
    }

    /// Whether new requests may go out.
    var sends: Bool {
        if case .sending = state { return true }
        return false
    }

    /// Whether the transport was asked to close.
    var closingTransport: Bool {
        switch state {
        case .closingTransport, .ended: return true
        case .sending, .stopping: return false
        }
    }

    /// Whether the transport said it closed.
    var transportClosed: Bool {
        switch state {
        case .closingTransport(_, _, let closed): return closed
        case .ended: return true
        case .sending, .stopping: return false
        }
    }

    /// Whether the run's end was reported.
    var hasEnded: Bool { state == .ended }

    // MARK: - The machine's own steps

    /// Whether the `--not-after` deadline has come at `now`: no new request may start.
    private func isPastDeadline(now: Double) -> Bool {
        guard let deadline = configuration.notAfter else { return false }
        return now >= deadline.at
    }

    /// Asks for a pump turn, unless one is asked for already or the run has ended: on the next loop turn, or
    /// with `afterQueuedEventsAt` (the transport's events, handled on a loop turn after they came) once the events
    /// queued now are handled, unless this loop turn (`now`) has pumped already.
    private mutating func requestPumpTurn(_ action: inout DispatcherAction, afterQueuedEventsAt now: Double? = nil) {
        let turn = pumpTurnRequested(afterQueuedEventsAt: now)
        if turn != .none { action.pumpTurn = turn }
    }

    /// The pump turn `requestPumpTurn` asks for (`none` when one is asked for already or the run has ended).
    private mutating func pumpTurnRequested(afterQueuedEventsAt now: Double? = nil) -> DispatcherAction.PumpTurn {
        guard !hasEnded, !timers.pumpTurnScheduled else { return .none }
        timers.pumpTurnScheduled = true
        if let now, timers.lastPumpAt != now { return .afterQueuedEvents }
        return .nextLoopTurn
    }

    /// The write of a record's final line, counted as it is decided, with the record's kept values when the
    /// machine holds them.
    private mutating func finalLine(_ result: consuming ResultRecord) -> DispatcherAction.RecordWrite {
        if !keptBySend.isEmpty, result.kept == nil, let kept = keptBySend.removeValue(forKey: result.key.packed) {
            result.kept = kept
        }
        summary.add(result.outcome)
        if result.isRejectedByAPNs { summary.rejected += 1 }
        if let reason = result.reason {
            summary.reasons["\(result.outcome.rawValue)/\(reason)", default: 0] += 1
        }
        return .finalResult(FinalLine(result))
    }

    /// Clears `inputOpen`: the reader has no more records.
    private mutating func closeInput() {
        switch state {
        case .sending: state = .sending(inputOpen: false)
        case .stopping(let ending, _): state = .stopping(ending, inputOpen: false)
        case .closingTransport(let ending, _, let closed):
            state = .closingTransport(ending, inputOpen: false, closed: closed)
        case .ended: break
        }
    }

    /// Moves to `stopping` (or names the cause while closing); false when a stop already began or the run ended.
    private mutating func enterStop(_ ending: Ending) -> Bool {
        switch state {
        case .sending(let open):
            state = .stopping(ending, inputOpen: open)
            return true
        case .closingTransport(nil, let open, let closed):
            state = .closingTransport(ending, inputOpen: open, closed: closed)
            return true
        case .stopping, .closingTransport, .ended:
            return false
        }
    }

    /// Moves to `closingTransport` and has the transport closed now; nothing when it already was asked to.
    private mutating func closeTransport(_ action: inout DispatcherAction) {
        switch state {
        case .sending(let open):
            state = .closingTransport(nil, inputOpen: open, closed: false)
        case .stopping(let ending, let open):
            state = .closingTransport(ending, inputOpen: open, closed: false)
        case .closingTransport, .ended:
            return
        }
        action.closeTransport = .now
    }
}

// MARK: - Events

/// Something that happened to a running dispatcher, queued until its loop hands it to the machine: a transport
/// callback, one of its own timers, a signal.
enum DispatcherEvent {
    /// `start` was called.
    case start
    /// The pump turn the machine asked for (`DispatcherAction.pumpTurn`) is due.
    case pumpTurn
    /// The wake-up the machine asked for (`wakeUpAfter`) is due.
    case wakeUp
    /// The grace period after a stop is over (`gracePeriodAfter`).
    case gracePeriodEnded
    /// The `--not-after` deadline has come (`deadlineAfter`).
    case deadlinePassed
    /// SIGINT/SIGTERM.
    case interrupt
    /// A second SIGINT/SIGTERM.
    case abortInFlight
    /// The transport reported the outcome of the request under `tag`, at `at`.
    case completed(tag: UInt64, outcome: PushOutcome, at: Double)
    /// The transport has free slots.
    case slotsFreed
    /// The transport cannot work at all.
    case transportFailed(any Error)
    /// The transport finished closing.
    case transportClosed
}

// MARK: - Pump

/// Which timer started a pump turn.
enum PumpTrigger {
    /// The pump turn asked for by `DispatcherAction.pumpTurn`.
    case pumpTurn
    /// The wake-up asked for by `wakeUpAfter`.
    case wakeUp
}

/// What one pump turn may do, as decided when it began.
struct PumpBudget: Equatable {
    /// Requests it may start: the transport's free slots, within the window and the rate limit.
    let requests: Int
    /// The free slots the transport offered (0 while it closes).
    let freeSlots: Int
}

/// The pump turn under way: its budget, and what it has done so far.
struct PumpTurnTally: Equatable {
    let budget: PumpBudget
    /// Records read this turn (skipped ones included).
    var read = 0
    /// Requests submitted this turn.
    var submitted = 0

    /// Whether a request is still to spare this turn.
    var canSubmit: Bool { budget.requests > submitted }
}

extension DispatcherStateMachine {
    /// A pump turn begins, with `transportSlots` free: its budget is set, and its first step is the action's
    /// `pumpStep` (nothing once the run has ended).
    mutating func pumpTurnBegan(_ trigger: PumpTrigger, freeSlots transportSlots: Int, now: Double) -> DispatcherAction
    {
        switch trigger {
        case .pumpTurn:
            timers.pumpTurnScheduled = false
        case .wakeUp:
            // The timer that fired is gone, whatever `now` says: one still due is asked for again at the turn's end
            // (a spare wake-up costs a pump turn; a wake-up thought pending when none is loses the retries).
            timers.wakeUpAt = nil
        }
        timers.lastPumpAt = now
        turn = nil
        guard !hasEnded else { return DispatcherAction() }
        let freeSlots = closingTransport ? 0 : transportSlots
        // Past the deadline nothing starts, even before its timer has run (it is due on this loop turn).
        var budget = isPastDeadline(now: now) ? 0 : min(freeSlots, max(0, window.size - inFlight.count))
        if var rate = limiter, budget > 0 {
            budget = rate.take(upTo: budget, now: now)
            limiter = rate
        }
        turn = PumpTurnTally(budget: PumpBudget(requests: budget, freeSlots: freeSlots))
        return nextPumpStep(waitingDueAt: now)
    }

    /// The send of the last `submit` step was journaled and handed to the transport under `tag`: it is in flight
    /// from `now`. Then the turn's next step.
    mutating func submitted(_ send: consuming PendingSend, tag: UInt64, now: Double) -> DispatcherAction {
        inFlight.file(send, under: tag, sentAt: now)
        guard var tally = turn else { return DispatcherAction() }
        tally.submitted += 1
        turn = tally
        return nextPumpStep(waitingDueAt: tally.read == 0 ? now : nil)
    }

    /// A record was read (the `readRecord` step): what becomes of it, as `RecordDecision` decides (counted as a
    /// record unless skipped): its final line written, its send submitted (a `submit` step), or, with no request
    /// to spare this turn, its send waiting for a slot. Then the turn's next step. Consumes `record`, so its
    /// notification moves on into the pending send without a copy.
    mutating func recordRead(
        _ record: consuming CampaignRecord, resume: ResumeStatus, resumedSends: Int, firstOccurrence: Bool,
        answeredBefore: String? = nil
    ) -> DispatcherAction {
        let kept = record.kept
        let decision = RecordDecision(configuration: configuration, stopCause: stopCause)
        let effect = decision.effect(
            for: consume record, resume: resume, resumedSends: resumedSends, firstOccurrence: firstOccurrence,
            answeredBefore: answeredBefore)
        var tally = turn ?? PumpTurnTally(budget: PumpBudget(requests: 0, freeSlots: 0))
        tally.read += 1
        if turn != nil { turn = tally }
        // Each action is built where it is returned: it is large, and a copy of it costs a `memcpy` call.
        switch consume effect {  // what it holds moves out, not copied
        case .skip:
            summary.recordsSkipped += 1
            return nextPumpStep(waitingDueAt: nil)
        case .writeFinalResult(var result):
            summary.records += 1
            result.kept = kept
            let write = finalLine(result)
            var action = nextPumpStep(waitingDueAt: nil)
            action.writes = .one(write)
            return action
        case .submit(let send):
            summary.records += 1
            if let kept { keptBySend[send.key.packed] = kept }
            guard tally.canSubmit else {
                park(send)
                return nextPumpStep(waitingDueAt: nil)
            }
            let tag = inFlight.reserveTag()
            return DispatcherAction(pumpStep: .submit(send), submitTag: tag)
        }
    }

    /// The reader has no more records (a `readRecord` step found none, or the shell knows it has none): then the
    /// turn's next step, if one is under way.
    mutating func inputExhausted() -> DispatcherAction {
        closeInput()
        return nextPumpStep(waitingDueAt: nil)
    }

    /// The turn's reading and sending are done (the `endTurn` step) and its sink is flushed: the transport is
    /// flushed, the window told how full it is, the next wake-up scheduled, and the run settled.
    /// `transportFreeSlots` is what the transport offers now, after the submits. Nothing when no turn is under way.
    mutating func pumpTurnEnded(transportFreeSlots: Int, now: Double) -> DispatcherAction {
        var action = DispatcherAction()
        guard let tally = turn else { return action }
        turn = nil
        if tally.read == configuration.maximumRecordsPerTurn { requestPumpTurn(&action) }
        if tally.submitted > 0 {
            summary.requests += tally.submitted
            action.flushTransport = true
        }
        if !closingTransport {
            window.observe(
                inFlight: inFlight.count, capacity: inFlight.count + tally.budget.freeSlots - tally.submitted)
            summary.inFlightWindow = window.size
            summary.maximumInFlight = max(summary.maximumInFlight, inFlight.count)
            let reach = window.reach
            if reach != announcedReach {
                announcedReach = reach
                action.expectInFlight = reach
            }
        }
        action.wakeUpAfter = wakeUpDelay(now: now, transportFreeSlots: transportFreeSlots)
        settle(&action, now: now)
        return action
    }

    /// The pump turn's next step, when a turn is under way (else nothing): with `waitingDueAt` (the turn has read
    /// no record yet) a send waiting to go again while the budget lasts, else the next record while `readsRecord`,
    /// else the turn's end, once the sink is flushed.
    private mutating func nextPumpStep(waitingDueAt now: Double?) -> DispatcherAction {
        guard let tally = turn else { return DispatcherAction() }
        if let now, tally.canSubmit, let send = nextWaitingSend(now: now) {
            let tag = inFlight.reserveTag()
            return DispatcherAction(pumpStep: .submit(send), submitTag: tag)
        }
        if readsRecord(tally) { return DispatcherAction(pumpStep: .readRecord) }
        return DispatcherAction(flushSink: true, pumpStep: .endTurn)
    }

    /// The next send waiting to go again: a resend of what the server never processed, else a retry now due.
    private mutating func nextWaitingSend(now: Double) -> PendingSend? {
        if let resend = unprocessedResends.popLast() { return resend }
        return retries.popDue(now: now)
    }

    /// Whether the pump reads another record, as far as the turn `tally` went: while the source is read, within
    /// the records per turn, and (while sending) within the budget.
    /// Without a request to spare, one record is still read ahead while no send waits: records that need no
    /// request (invalid, duplicate, already answered) get their lines, and the input's end is seen, without a
    /// connection (a replay with nothing left to send ends at once, whether or not APNs can be reached); the
    /// first that needs a request waits for a slot (`park`).
    private func readsRecord(_ tally: PumpTurnTally) -> Bool {
        readsSource && tally.read < configuration.maximumRecordsPerTurn
            && (!sends || tally.canSubmit || unprocessedResends.isEmpty)
    }

    /// A record read with no request to spare this turn: it waits for a slot, first of the sends waiting.
    private mutating func park(_ send: consuming PendingSend) {
        unprocessedResends.append(send)
    }

    /// When the loop should wake for waiting work, in seconds from `now`: when the next retry falls due, and no
    /// sooner than the rate limiter allows. Nil when no wake-up is needed: work that waits only for a stream slot
    /// needs none (a slot freeing up pumps), a wake-up that could not send anything would only spin, and one
    /// already scheduled no later is enough.
    private mutating func wakeUpDelay(now: Double, transportFreeSlots: Int) -> Double? {
        guard !closingTransport else { return nil }
        var readyAt: Double?
        if !unprocessedResends.isEmpty || (inputOpen && sends) { readyAt = now }
        if let due = retries.nextDue { readyAt = min(readyAt ?? due, max(now, due)) }
        guard var wakeAt = readyAt else { return nil }
        if wakeAt <= now, transportFreeSlots == 0 || inFlight.count >= window.size { return nil }
        if var rate = limiter {
            wakeAt = max(wakeAt, now + rate.delayUntilNext(now: now))
            limiter = rate
        }
        if let scheduled = timers.wakeUpAt, scheduled <= wakeAt, scheduled > now { return nil }
        timers.wakeUpAt = wakeAt
        return wakeAt - now
    }
}

// MARK: - Answers

extension DispatcherStateMachine {
    /// The transport reported the outcome of the request under `tag`, at `now`: its latency is recorded, the
    /// window and the campaign's health told, and `AnswerDecision` decides what becomes of the record. Then a pump
    /// turn, since a slot freed up. A tag not in flight (already reported) leads to nothing.
    mutating func completed(tag: UInt64, outcome: PushOutcome, now: Double) -> DispatcherAction {
        guard let sentAt = inFlight.sentAt(tag: tag), var send = inFlight.remove(tag: tag) else {
            return DispatcherAction()
        }
        summary.latencies.record(max(0, now - sentAt))
        switch outcome {
        case .answered(let answer): window.answered(sentAt: sentAt, now: now, accepted: answer.status == 200)
        case .failed(.answerLost): window.lost()
        case .failed: break  // not processed: it is sent again and comes back to the window
        }

        let sendAction = OutcomePolicy.action(for: outcome)
        var reason: APNSReason?
        switch outcome {
        case .answered(let answer):
            summary.answered += 1
            send.attempts += 1
            send.recordAnswer(status: answer.status, reason: answer.reason?.rawValue)
            reason = answer.reason
        case .failed(let failure):
            if sendAction == .retry(.immediately) { send.unprocessed += 1 } else { send.attempts += 1 }
            send.recordFailure(detail: failure.description)
        }
        let verdict = health.record(sendAction, reason: reason)
        // A token called bad is held until its topic is confirmed; a delivery or a 410 confirms it.
        var confirmedLines: [ResultRecord] = []
        switch sendAction {
        case .delivered:
            confirmedLines = tokenRejections.confirm(topic: send.notification.topic.value)
        case .prune where TokenRejectionCheck.isTokenRejection(sendAction, reason: reason):
            switch tokenRejections.reject(send, apnsID: outcome.answer?.apnsID) {
            case .prune:
                break
            case .held:
                return DispatcherAction(pumpTurn: pumpTurnRequested(afterQueuedEventsAt: now))
            case .stop(let why):
                return DispatcherAction(
                    thenStop: .stoppedEarly(why), pumpTurn: pumpTurnRequested(afterQueuedEventsAt: now))
            case .stopping(let rejection):
                let write = unconfirmedWrite(rejection)
                return DispatcherAction(writes: .one(write), pumpTurn: pumpTurnRequested(afterQueuedEventsAt: now))
            }
        case .prune:
            confirmedLines = tokenRejections.confirm(topic: send.notification.topic.value)
        default:
            break
        }
        let decision = AnswerDecision(
            configuration: configuration, stopCause: stopCause, sends: sends,
            secondsToDeadline: configuration.notAfter.map { $0.at - now })
        let effect = decision.effect(of: sendAction, answer: outcome.answer, send: send, using: &generator)
        let writes: DispatcherAction.RecordWrites
        switch consume effect {  // what it holds moves out, not copied
        case .writeFinalResult(let result):
            // Rarely anything released: a `where` on the case would copy the line before the test.
            if confirmedLines.isEmpty {
                writes = .one(finalLine(result))
            } else {
                var all: [DispatcherAction.RecordWrite] = []
                for line in confirmedLines { all.append(finalLine(line)) }
                all.append(finalLine(result))
                writes = .many(all)
            }
        case .retryLater(let send, let delay):
            summary.retries += 1
            writes = .one(.journalRetryable(send.key))
            retries.push(send, due: now + delay)
        case .leaveForResume(let key):
            writes = .one(.journalRetryable(key))  // `send --resume` sends it again
        case .resendUnprocessed(let send):
            summary.retries += 1  // a resend is a retry, whether or not the server processed the first request
            unprocessedResends.append(send)
            writes = .none
        }
        // The stop begins once the record's own line is written: if that write fails, the failure ends the run.
        var thenStop: Ending?
        if case .stop(let why) = verdict { thenStop = .stoppedEarly(why) }
        // Built where it is returned, so the line moves into it and out of here without a copy.
        return DispatcherAction(
            writes: writes, thenStop: thenStop, pumpTurn: pumpTurnRequested(afterQueuedEventsAt: now))
    }
}

// MARK: - Stop

extension DispatcherStateMachine {
    /// A stop begins (`--stop-after` rejections in a row, the transport failing, an interrupt, the deadline): no new
    /// requests.
    /// Sends waiting for a retry or a resend get their final lines (`PendingSend.outcomeWithoutAnswer`), or after
    /// an interrupt are journaled as safe to resend; requests in flight are awaited until the grace period ends.
    /// The first cause wins: a later stop (an interrupt during an early stop) does nothing.
    mutating func stop(_ ending: Ending) -> DispatcherAction {
        var action = DispatcherAction()
        guard enterStop(ending) else { return action }
        var waiting = retries.drain()
        waiting += unprocessedResends
        unprocessedResends = []
        var writes: [DispatcherAction.RecordWrite] = []
        for send in waiting {
            writes.append(
                ending == .interrupted
                    ? .journalRetryable(send.key) : finalLine(send.finalResultWithoutAnswer(stoppedBy: ending)))
        }
        for rejection in tokenRejections.stop() { writes.append(unconfirmedWrite(rejection)) }
        if !writes.isEmpty { action.writes = .many(writes) }
        action.flushSink = true
        if !inFlight.isEmpty { action.gracePeriodAfter = configuration.drainGracePeriod }
        requestPumpTurn(&action)
        return action
    }

    /// The write for a held rejection when the campaign stops: its retryable line, or after an interrupt its
    /// journal entry (`send --resume` sends it again).
    private mutating func unconfirmedWrite(_ rejection: TokenRejectionCheck.Held) -> DispatcherAction.RecordWrite {
        if stopCause == .interrupted { return .journalRetryable(rejection.send.key) }
        return finalLine(rejection.unconfirmed)
    }

    /// The grace period after a stop is over: the transport closes, and what is still in flight comes back as
    /// answer lost.
    mutating func gracePeriodEnded() -> DispatcherAction {
        var action = DispatcherAction()
        closeTransport(&action)
        return action
    }

    /// A second signal: stop waiting for answers; the transport closes now and what is in flight is in doubt.
    mutating func abortInFlight() -> DispatcherAction {
        var action = stop(.interrupted)
        closeTransport(&action)
        return action
    }

    /// The files themselves failed (unreadable input, a full disk): nothing new is read or sent, sends waiting
    /// are dropped (the next run resends them), and the transport closes now, reporting requests that never left
    /// as not sent. The pump turn under way, if any, ends here (a send it was about to submit never left). The
    /// first failure is the one reported at the end; one of the end's own flush, after `ended`, changes nothing
    /// else.
    mutating func runFailed(_ error: any Error, now: Double) -> DispatcherAction {
        if runFailure == nil { runFailure = error }
        _ = enterStop(.stoppedEarly("\(error)"))
        closeInput()
        turn = nil
        inFlight.cancelReservation()
        retries = RetryQueue()
        unprocessedResends = []
        var action = DispatcherAction()
        closeTransport(&action)
        settle(&action, now: now)
        return action
    }

    /// The transport said it closed: the run ends once settled.
    mutating func transportClosed(now: Double) -> DispatcherAction {
        switch state {
        case .closingTransport(let ending, let open, _):
            state = .closingTransport(ending, inputOpen: open, closed: true)
        case .sending(let open):
            state = .closingTransport(nil, inputOpen: open, closed: true)
        case .stopping(let ending, let open):
            state = .closingTransport(ending, inputOpen: open, closed: true)
        case .ended:
            break
        }
        var action = DispatcherAction()
        settle(&action, now: now)
        return action
    }

    /// Ends the run once every record read is accounted for: closes the transport when the work is done, and
    /// once the transport said it closed, moves to `ended` and has the end reported (once), after the sink's last
    /// flush.
    private mutating func settle(_ action: inout DispatcherAction, now: Double) {
        guard !hasEnded, !readsSource else { return }
        guard inFlight.isEmpty, retries.isEmpty, unprocessedResends.isEmpty else { return }
        if !closingTransport, tokenRejections.holdsAny {
            // Rejections still held for want of an accepted token: with none accepted at all, the campaign
            // stopped for them; otherwise they are dead tokens marked unconfirmed.
            let (stopReason, lines) = tokenRejections.settle()
            if let stopReason { _ = enterStop(.stoppedEarly(stopReason)) }
            var writes: [DispatcherAction.RecordWrite] = []
            for line in lines { writes.append(finalLine(line)) }
            action.append(writes)
        }
        if !closingTransport {
            closeTransport(&action)
            action.closeTransport = .afterFlushingSink  // `transportClosed` comes back here
            return
        }
        guard transportClosed else { return }
        summary.ending = stopCause ?? .completed
        summary.elapsedSeconds = now - startedAt
        state = .ended
        action.flushSink = true
        action.reportEnd = true
    }
}
