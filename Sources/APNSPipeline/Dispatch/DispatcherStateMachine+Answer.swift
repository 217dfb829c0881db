import APNSCore

extension DispatcherStateMachine {
    /// The transport reported the outcome of the request under `tag`, at `now`: its latency is recorded, the
    /// window and the campaign's health told, and `AnswerDecision` decides what becomes of the record. Then a pump
    /// turn, since a slot freed up. A tag not in flight (already reported) leads to nothing.
    mutating func completed(tag: UInt64, outcome: PushOutcome, now: Double) -> DispatcherAction {
        guard let sentAt = inFlight.sentAt(tag: tag), var send = inFlight.remove(tag: tag) else {
            return DispatcherAction()
        }
        summary.latencies.record(max(0, now - sentAt))
        if case .answered = outcome { window.answered(sentAt: sentAt, now: now) }

        let sendAction = OutcomePolicy.action(for: outcome)
        var reason: APNSReason?
        switch outcome {
        case .answered(let answer):
            send.attempts += 1
            send.recordAnswer(status: answer.status, reason: answer.reason?.rawValue)
            reason = answer.reason
        case .failed(let failure):
            if sendAction == .retry(.immediately) { send.unprocessed += 1 } else { send.attempts += 1 }
            send.recordFailure(detail: failure.description)
        }
        let verdict = health.record(sendAction, reason: reason)
        let decision = AnswerDecision(configuration: configuration, stopCause: stopCause, sends: sends)
        let effect = decision.effect(of: sendAction, answer: outcome.answer, send: send, using: &generator)
        let writes: DispatcherAction.RecordWrites
        switch consume effect {  // what it holds moves out, not copied
        case .writeFinalResult(let result):
            writes = .one(.finalResult(result))
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
