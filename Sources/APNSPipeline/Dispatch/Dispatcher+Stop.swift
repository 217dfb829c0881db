import APNSCore

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
                    let outcome: RecordOutcome = send.attempts == 0 ? .notSent : .retryable
                    try writeFinalResult(result(for: send, outcome: outcome, detail: send.lastDetail ?? "campaign stopped"))
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
