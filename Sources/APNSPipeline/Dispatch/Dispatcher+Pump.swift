import APNSCore

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
