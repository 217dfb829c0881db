import APNSCore

/// What the dispatcher does with one answer or transport failure, decided without I/O: the `SendAction`
/// `OutcomePolicy` chose, read against the run's phase and configuration, becomes one effect for the dispatcher
/// to carry out (write a final line, journal a retry and queue it, queue a resend).
struct AnswerDecision {
    /// What to do with the record.
    enum Effect {
        /// Write the record's final line.
        case writeFinalResult(ResultRecord)
        /// Count a retry, journal the record as safe to resend, and send it again `delay` seconds from now.
        case retryLater(PendingSend, delay: Double)
        /// Journal the record as safe to resend, and nothing more: `send --resume` sends it (after an interrupt).
        case leaveForResume(RecordKey)
        /// Send it again as soon as a slot frees up: the server never processed it.
        case resendUnprocessed(PendingSend)
    }

    /// The configuration's settings it reads (kept apart: a copy of the whole configuration an answer costs more
    /// than the decision).
    let resendInDoubt: Bool
    let retry: ExponentialBackoff
    let maximumUnprocessedResends: Int
    let notAfter: SendDeadline?
    /// Why the run is stopping, if it is.
    let stopCause: CampaignSummary.Ending?
    /// Whether new requests may still go out.
    let sends: Bool
    /// Seconds from the answer to the `--not-after` deadline (negative once past); nil without one. A retry that
    /// would fall due after it is not queued: the record ends retryable, its line saying the deadline cut it.
    var secondsToDeadline: Double? = nil

    init(
        configuration: borrowing DispatcherConfiguration, stopCause: CampaignSummary.Ending?, sends: Bool,
        secondsToDeadline: Double? = nil
    ) {
        resendInDoubt = configuration.resendInDoubt
        retry = configuration.retry
        maximumUnprocessedResends = configuration.maximumUnprocessedResends
        notAfter = configuration.notAfter
        self.stopCause = stopCause
        self.sends = sends
        self.secondsToDeadline = secondsToDeadline
    }

    /// The effect of `action` on `send` (its attempts and last answer already updated); `answer` is APNs' answer.
    func effect(
        of action: SendAction, answer: PushAnswer?, send: PendingSend, using generator: inout some RandomNumberGenerator
    ) -> Effect {
        switch action {
        // Each result is made where it is returned, so it moves into the effect rather than being copied there.
        case .delivered:
            return .writeFinalResult(
                send.finalResult(
                    .delivered, detail: nil, apnsID: answer?.apnsID, apnsUniqueID: answer?.apnsUniqueID))
        case .prune:
            return .writeFinalResult(
                send.finalResult(.prune, detail: nil, apnsID: answer?.apnsID, timestamp: answer?.timestamp))
        case .reject:
            return .writeFinalResult(send.finalResult(.inputError, detail: "rejected by APNs", apnsID: answer?.apnsID))
        case .stop(let cause):
            let why = cause == .credentials ? "credentials rejected by APNs" : "APNs cannot route the request"
            return .writeFinalResult(send.finalResult(.retryable, detail: why))
        case .retry(let kind):
            return retry(send, kind: kind, using: &generator)
        case .inDoubt:
            if resendInDoubt, sends, retry.allowsRetry(afterAttempts: send.attempts) {
                return .retryLater(send, delay: 0)
            }
            return .writeFinalResult(send.finalResult(.inDoubt, detail: send.lastDetail))
        }
    }

    private func retry(_ send: PendingSend, kind: SendAction.Retry, using generator: inout some RandomNumberGenerator)
        -> Effect
    {
        if stopCause == .interrupted { return .leaveForResume(send.key) }
        if let stopCause { return .writeFinalResult(send.finalResultWithoutAnswer(stoppedBy: stopCause)) }
        if kind == .immediately {
            guard send.unprocessed <= maximumUnprocessedResends else {
                let detail = "not processed after \(send.unprocessed) tries: \(send.lastDetail ?? "")"
                return .writeFinalResult(send.finalResult(send.outcomeWithoutAnswer(stoppedBy: nil), detail: detail))
            }
            return .resendUnprocessed(send)
        }
        guard retry.allowsRetry(afterAttempts: send.attempts) else {
            return .writeFinalResult(
                send.finalResult(.retryable, detail: "gave up after \(CountedNoun.text(send.attempts, "attempt"))"))
        }
        let delay: Double
        switch kind {
        case .afterResigningToken, .atOnce, .immediately:
            delay = 0  // the transport has re-signed the token; the server closes an idle connection
        case .afterBackoff:
            delay = retry.delay(afterAttempt: send.attempts, using: &generator)
        }
        if let secondsToDeadline, let deadline = notAfter, delay >= secondsToDeadline {
            return .writeFinalResult(send.finalResultWithoutAnswer(stoppedBy: .deadlinePassed(deadline.text)))
        }
        return .retryLater(send, delay: delay)
    }
}
