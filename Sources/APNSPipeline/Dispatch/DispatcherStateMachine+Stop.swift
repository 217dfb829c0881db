import APNSCore

extension DispatcherStateMachine {
    /// A stop begins (`--stop-after` rejections in a row, the transport failing, an interrupt): no new requests.
    /// Sends waiting for a retry or a resend get their final lines (`PendingSend.outcomeWithoutAnswer`), or after
    /// an interrupt are journaled as safe to resend; requests in flight are awaited until the grace period ends.
    /// The first cause wins: a later stop (an interrupt during an early stop) does nothing.
    mutating func stop(_ ending: Ending) -> DispatcherAction {
        var action = DispatcherAction()
        guard enterStop(ending) else { return action }
        var waiting = retries.drain()
        waiting += unprocessedResends
        unprocessedResends = []
        if !waiting.isEmpty {
            action.writes = .many(waiting.map { send in
                if ending == .interrupted { return .journalRetryable(send.key) }
                return .finalResult(send.finalResult(
                    send.outcomeWithoutAnswer, detail: send.lastDetail ?? "campaign stopped"))
            })
        }
        action.flushSink = true
        if !inFlight.isEmpty { action.gracePeriodAfter = configuration.drainGracePeriod }
        requestPumpTurn(&action)
        return action
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
    /// as not sent. The first failure is the one reported at the end.
    mutating func runFailed(_ error: any Error, now: Double) -> DispatcherAction {
        if runFailure == nil { runFailure = error }
        _ = enterStop(.stoppedEarly("\(error)"))
        inputExhausted()
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
    /// once the transport said it closed, moves to `ended` and has the end reported (once).
    mutating func settle(_ action: inout DispatcherAction, now: Double) {
        guard !hasEnded, !readsSource else { return }
        guard inFlight.isEmpty, retries.isEmpty, unprocessedResends.isEmpty else { return }
        if !closingTransport {
            closeTransport(&action)
            action.closeTransport = .afterFlushingSink  // `transportClosed` comes back here
            return
        }
        guard transportClosed else { return }
        summary.ending = stopCause ?? .completed
        summary.elapsedSeconds = now - startedAt
        state = .ended
        action.reportEnd = true
    }

    /// The end is being reported: its last flush failed with `flushFailure`, if it did. Returns the summary and
    /// the failure that ended the run, if any.
    mutating func endReported(
        flushFailure: (any Error)?, readProgress: ReadProgress?
    ) -> (summary: CampaignSummary, failure: (any Error)?) {
        if runFailure == nil, let flushFailure { runFailure = flushFailure }
        noteProgressFacts(readProgress: readProgress)
        return (summary, runFailure)
    }
}
