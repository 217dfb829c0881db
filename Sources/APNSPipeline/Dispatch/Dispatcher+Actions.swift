import APNSCore

// The I/O the machine's actions stand for; called only from the event loop (`handleEvents`).
extension Dispatcher {
    /// Runs `action` in the order of its fields. A write or flush that fails ends the run (`runFailed`): the writes
    /// and flushes after it are not done (no request leaves unjournaled), but its timers, the close and the end's
    /// report are, since the machine has already moved on to them.
    func run(_ action: DispatcherAction) {
        var failure: (any Error)?
        do {
            try perform(action.writes)
            if let ending = action.thenStop { run(machine.stop(ending)) }
            if action.flushSink { try sink.flush() }
        } catch {
            failure = error
        }
        if failure == nil, action.flushTransport { transport.flush() }
        switch action.pumpTurn {
        case .none: break
        case .afterQueuedEvents: postAfterQueuedEvents(.pumpTurn)  // asked for while the loop handles the queue
        case .nextLoopTurn: scheduler.schedule(after: 0) { [weak self] in self?.post(.pumpTurn) }
        }
        if let delay = action.wakeUpAfter { scheduler.schedule(after: delay) { [weak self] in self?.post(.wakeUp) } }
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
        if action.reportEnd { reportEnd() }
    }

    private func perform(_ writes: DispatcherAction.RecordWrites) throws {
        switch writes {
        case .none: break
        case .one(let write): try perform(write)
        case .many(let all): for write in all { try perform(write) }
        }
    }

    private func perform(_ write: DispatcherAction.RecordWrite) throws {
        switch write {
        case .finalResult(let result): try writeFinalResult(result)
        case .journalRetryable(let key): try sink.journalRetryable(key)
        }
    }

    /// Writes a record's final line, counted first.
    private func writeFinalResult(_ result: ResultRecord) throws {
        machine.countFinalResult(result)
        try sink.write(result)
    }

    /// The files themselves failed: the machine ends the run.
    private func fail(_ error: any Error) {
        run(machine.runFailed(error, now: scheduler.now))
    }

    /// Flushes the sink one last time and reports the end.
    private func reportEnd() {
        var flushFailure: (any Error)?
        do { try sink.flush() } catch { flushFailure = error }
        let end = machine.endReported(flushFailure: flushFailure, readProgress: reader.readProgress)
        onEnd?(end.summary, end.failure)
        onEnd = nil
    }

    // MARK: - Pump

    /// One loop turn of work: resend what is due, read and send new records while slots are free, write results
    /// of records that need no network, then flush the journal before the network.
    func pump(_ trigger: PumpTrigger) {
        guard let budget = machine.pumpTurnBegan(trigger, freeSlots: transport.freeSlots, now: scheduler.now) else {
            return
        }
        var submitted = 0
        var read = 0
        do {
            while budget.requests > submitted, let send = machine.nextWaitingSend(now: scheduler.now) {
                try submit(send)
                submitted += 1
            }
            while machine.readsRecord(read: read, submitted: submitted, budget: budget) {
                guard let record = try reader.nextRecord() else {
                    machine.inputExhausted()
                    break
                }
                read += 1
                if try take(record) { submitted += 1 }
            }
            try sink.flush()
        } catch {
            fail(error)
            return
        }
        run(machine.pumpTurnEnded(
            read: read, submitted: submitted, budget: budget, transportFreeSlots: transport.freeSlots,
            now: scheduler.now))
    }

    /// Handles one record read from the reader, as the machine decides; returns whether it was submitted.
    private func take(_ record: consuming CampaignRecord) throws -> Bool {
        // The duplicate filter sees every valid record, in input order, also those a resumed run skips.
        var firstOccurrence = true
        if !machine.configuration.allowDuplicates, case .notification(let notification) = record.content {
            firstOccurrence = try isFirstOccurrence(notification)
        }
        let resume = resumeStatus(record.key)
        let sendsBefore = resume == .inDoubt ? resumedSends(record.key) : 0
        // The record moves into the decision (its last use here), and its notification on into the pending send;
        // consumed, so the pending send moves on into the in-flight table without a copy.
        let effect = machine.recordRead(
            consume record, resume: resume, resumedSends: sendsBefore, firstOccurrence: firstOccurrence)
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
    private func submit(_ send: consuming PendingSend) throws {
        try sink.journalSent(send.key)
        let tag = machine.reserveTag()
        transport.submit(send.notification, tag: tag)  // borrowed: the send is filed after, not copied for this
        machine.submitted(send, tag: tag, now: scheduler.now)
    }
}
