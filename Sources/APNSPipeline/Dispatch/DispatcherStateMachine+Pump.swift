import APNSCore

/// Which timer started a pump turn.
enum PumpTrigger {
    /// The pump turn asked for by `DispatcherAction.pumpTurn`.
    case pumpTurn
    /// The wake-up asked for by `wakeUpAfter`.
    case wakeUp
}

/// What one pump turn may do, as decided when it began.
struct PumpBudget {
    /// Requests it may start: the transport's free slots, within the window and the rate limit.
    let requests: Int
    /// The free slots the transport offered (0 while it closes).
    let freeSlots: Int
}

extension DispatcherStateMachine {
    /// A pump turn begins: the budget for its requests, or nil when the run has ended and there is nothing to do.
    /// The dispatcher then submits `nextWaitingSend`s and reads records while `readsRecord`, and reports back with
    /// `pumpTurnEnded` once its sink is flushed.
    mutating func pumpTurnBegan(_ trigger: PumpTrigger, freeSlots transportSlots: Int, now: Double) -> PumpBudget? {
        switch trigger {
        case .pumpTurn:
            timers.pumpTurnScheduled = false
        case .wakeUp:
            if let due = timers.wakeUpAt, due <= now { timers.wakeUpAt = nil }
        }
        timers.lastPumpAt = now
        guard !hasEnded else { return nil }
        let freeSlots = closingTransport ? 0 : transportSlots
        var budget = min(freeSlots, max(0, window.size - inFlight.count))
        if var rate = limiter, budget > 0 {
            budget = rate.take(upTo: budget, now: now)
            limiter = rate
        }
        return PumpBudget(requests: budget, freeSlots: freeSlots)
    }

    /// The next send waiting to go again: a resend of what the server never processed, else a retry now due.
    mutating func nextWaitingSend(now: Double) -> PendingSend? {
        if let resend = unprocessedResends.popLast() { return resend }
        return retries.popDue(now: now)
    }

    /// Whether the pump reads another record, having read `read` and submitted `submitted` this turn: while the
    /// source is read, within the records per turn, and (while sending) within the budget.
    func readsRecord(read: Int, submitted: Int, budget: PumpBudget) -> Bool {
        readsSource && read < configuration.maximumRecordsPerTurn && (!sends || budget.requests > submitted)
    }

    /// A record was read: what to do with it, as `RecordDecision` decides (counted as a record unless skipped).
    /// Consumes `record`, so its notification moves on into the pending send without a copy.
    mutating func recordRead(
        _ record: consuming CampaignRecord, resume: ResumeStatus, resumedSends: Int, firstOccurrence: Bool
    ) -> RecordDecision.Effect {
        let decision = RecordDecision(configuration: configuration, stopCause: stopCause)
        let effect = decision.effect(
            for: consume record, resume: resume, resumedSends: resumedSends, firstOccurrence: firstOccurrence)
        summary.records += effect.recordCountChange
        return effect
    }

    /// The tag the next submitted send goes under.
    mutating func reserveTag() -> UInt64 {
        inFlight.reserveTag()
    }

    /// `send` was journaled and handed to the transport under `tag`: it is in flight from `now`.
    mutating func submitted(_ send: consuming PendingSend, tag: UInt64, now: Double) {
        inFlight.file(send, under: tag, sentAt: now)
    }

    /// The pump turn read `read` records and submitted `submitted` requests, and its sink is flushed: the
    /// transport is flushed, the window told how full it is, the next wake-up scheduled, and the run settled.
    /// `transportFreeSlots` is what the transport offers now, after the submits.
    mutating func pumpTurnEnded(
        read: Int, submitted: Int, budget: PumpBudget, transportFreeSlots: Int, now: Double
    ) -> DispatcherAction {
        var action = DispatcherAction()
        if read == configuration.maximumRecordsPerTurn { requestPumpTurn(&action) }
        if submitted > 0 {
            summary.requests += submitted
            action.flushTransport = true
        }
        if !closingTransport {
            window.observe(inFlight: inFlight.count, capacity: inFlight.count + budget.freeSlots - submitted)
            summary.inFlightWindow = window.size
            summary.maximumInFlight = max(summary.maximumInFlight, inFlight.count)
        }
        action.wakeUpAfter = wakeUpDelay(now: now, transportFreeSlots: transportFreeSlots)
        settle(&action, now: now)
        return action
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
