import APNSCore

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
        if result.outcome == .inputError, result.attempts > 0 { summary.rejected += 1 }
        if let reason = result.reason {
            summary.reasons["\(result.outcome.rawValue)/\(reason)", default: 0] += 1
        }
        try sink.write(result)
    }
}
