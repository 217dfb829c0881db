import APNSCore

extension Dispatcher {
    /// Acts on one answer or transport failure, as `OutcomePolicy` decides.
    func handle(_ outcome: PushOutcome, for send: inout PendingSend) {
        let action = OutcomePolicy.action(for: outcome)
        var reason: APNSReason?
        switch outcome {
        case .answered(let answer):
            send.attempts += 1
            send.lastStatus = answer.status
            send.lastReason = answer.reason?.rawValue
            send.lastDetail = nil
            reason = answer.reason
        case .failed(let failure):
            if action == .retry(.immediately) { send.unprocessed += 1 } else { send.attempts += 1 }
            send.lastStatus = nil
            send.lastReason = nil
            send.lastDetail = failure.description
        }
        let verdict = health.record(action, reason: reason)
        do {
            try act(on: action, answer: outcome.answer, send: send)
        } catch {
            failRun(error)  // the transport closes on the next turn, after this callback has returned
            return
        }
        if case .stop(let why) = verdict { beginStop(.stoppedEarly(why)) }
    }

    private func act(on action: SendAction, answer: PushAnswer?, send: PendingSend) throws {
        switch action {
        case .delivered:
            var result = result(for: send, outcome: .delivered, detail: nil)
            result.apnsID = answer?.apnsID
            try writeFinalResult(result)
        case .prune:
            var result = result(for: send, outcome: .prune, detail: nil)
            result.apnsID = answer?.apnsID
            result.timestamp = answer?.timestamp
            try writeFinalResult(result)
        case .reject:
            var result = result(for: send, outcome: .inputError, detail: "rejected by APNs")
            result.apnsID = answer?.apnsID
            try writeFinalResult(result)
        case .stop(let cause):
            let why = cause == .credentials ? "credentials rejected by APNs" : "APNs cannot route the request"
            try writeFinalResult(result(for: send, outcome: .retryable, detail: why))
        case .retry(let kind):
            try retry(send, kind: kind)
        case .inDoubt:
            if configuration.resendInDoubt, phase.sends, configuration.retry.allowsRetry(afterAttempts: send.attempts) {
                summary.retries += 1
                try sink.journalRetryable(send.key)
                retries.push(send, due: scheduler.now)
            } else {
                try writeFinalResult(result(for: send, outcome: .inDoubt, detail: send.lastDetail))
            }
        }
    }

    private func retry(_ send: PendingSend, kind: SendAction.Retry) throws {
        if phase.stopCause == .interrupted {
            try sink.journalRetryable(send.key)  // `send --resume` sends it again
            return
        }
        if phase.stopCause != nil {
            let outcome: RecordOutcome = send.attempts == 0 ? .notSent : .retryable
            try writeFinalResult(result(for: send, outcome: outcome, detail: send.lastDetail ?? "campaign stopped"))
            return
        }
        if kind == .immediately {
            guard send.unprocessed <= configuration.maximumUnprocessedResends else {
                let detail = "not processed after \(send.unprocessed) tries: \(send.lastDetail ?? "")"
                try writeFinalResult(result(for: send, outcome: send.attempts == 0 ? .notSent : .retryable, detail: detail))
                return
            }
            unprocessedResends.append(send)
            return
        }
        guard configuration.retry.allowsRetry(afterAttempts: send.attempts) else {
            try writeFinalResult(result(for: send, outcome: .retryable, detail: "gave up after \(send.attempts) attempts"))
            return
        }
        summary.retries += 1
        try sink.journalRetryable(send.key)
        let delay: Double
        switch kind {
        case .afterResigningToken, .atOnce, .immediately:
            delay = 0  // the transport has re-signed the token; an idle connection is closed by the server
        case .afterBackoff:
            delay = configuration.retry.delay(afterAttempt: send.attempts, using: &generator)
        }
        retries.push(send, due: scheduler.now + delay)
    }

    func result(for send: PendingSend, outcome: RecordOutcome, detail: String?) -> DispatchResult {
        DispatchResult(
            key: send.key, outcome: outcome, token: send.notification.token.hex,
            topic: send.notification.topic.value, status: send.lastStatus, reason: send.lastReason,
            detail: detail, attempts: send.attempts,
            notification: outcome.isReplayable ? send.notification : nil)
    }

    /// Writes a record's final line and counts it.
    func writeFinalResult(_ result: DispatchResult) throws {
        summary.outcomes[result.outcome, default: 0] += 1
        if let reason = result.reason {
            summary.reasons["\(result.outcome.rawValue)/\(reason)", default: 0] += 1
        }
        try sink.write(result)
    }
}
