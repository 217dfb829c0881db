import APNSCore
import APNSTransport

extension Dispatcher {
    /// Stops starting new work. The first cause wins, except that an interrupt during an early stop is ignored
    /// (the early stop already ends every record).
    func beginStop(_ ending: DispatchSummary.Ending) {
        guard stopping == nil, !finished else { return }
        stopping = ending
        let waiting = retries.drain() + unprocessedResends
        unprocessedResends = []
        do {
            for send in waiting {
                if ending == .interrupted {
                    try sink.journalRetryable(send.key)
                } else {
                    let outcome: RecordOutcome = send.attempts == 0 ? .notSent : .retryable
                    try finish(result(for: send, outcome: outcome, detail: send.lastDetail ?? "campaign stopped"))
                }
            }
            try sink.flush()
        } catch {
            failRun(error)
            return
        }
        if !inFlight.isEmpty {
            scheduler.schedule(after: configuration.drainGracePeriod) { [weak self] in
                guard let self, !self.finished, !self.closing else { return }
                self.closing = true
                self.transport.close(gracePeriod: 0)  // what is still in flight comes back as answer lost
            }
        }
        schedulePump()
    }

    /// Ends the run at once after a failure of the files themselves (unreadable input, a full disk): nothing new
    /// is sent, and the transport closes, reporting requests that never left as not sent. Inside a transport
    /// callback (`closingNow: false`) the close waits for the next loop turn: closing a connection from inside
    /// its own answer callback would report its unsent requests as in doubt.
    func failRun(_ error: any Error, closingNow: Bool = true) {
        if fatalError == nil { fatalError = error }
        if stopping == nil { stopping = .stoppedEarly("\(error)") }
        inputExhausted = true
        retries = RetryQueue()
        unprocessedResends = []
        guard closingNow || closing else {
            scheduler.schedule(after: 0) { [weak self] in self?.failRun(error) }
            return
        }
        if !closing {
            closing = true
            transport.close(gracePeriod: 0)
        }
        finishIfDone()
    }

    /// Finishes once every record read is accounted for and the transport has closed.
    func finishIfDone() {
        guard !finished else { return }
        let readingDone = inputExhausted || stopping == .interrupted
        guard readingDone, inFlight.isEmpty, retries.isEmpty, unprocessedResends.isEmpty else { return }
        if !closing {
            closing = true
            try? sink.flush()
            transport.close(gracePeriod: 0)
            return  // transportDidClose calls back here
        }
        guard transportClosed else { return }
        finished = true
        do {
            try sink.flush()
        } catch {
            if fatalError == nil { fatalError = error }
        }
        summary.ending = stopping ?? .completed
        summary.elapsedSeconds = scheduler.now - startedAt
        noteProgressFacts()
        onFinish?(summary, fatalError)
        onFinish = nil
    }
}

extension Dispatcher {
    /// A second interrupt: stop waiting for answers; requests still in flight are reported in doubt now.
    public func abortInFlight() {
        beginStop(.interrupted)
        guard !finished, !closing else { return }
        closing = true
        transport.close(gracePeriod: 0)
    }
}
