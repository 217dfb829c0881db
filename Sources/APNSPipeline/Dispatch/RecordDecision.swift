import APNSCore

/// What the dispatcher does with one record read from the input, decided without I/O: the record, what the run
/// being resumed knew of it, whether its (token, topic) pair is new, and whether the run is stopping become one
/// effect for the dispatcher to carry out (skip it, write its final line, or submit it).
struct RecordDecision {
    /// What to do with the record.
    enum Effect {
        /// Nothing: the run being resumed wrote its final line, and counted it.
        case skip
        /// Write the record's final line without sending it (input error, duplicate, in doubt and not resent,
        /// campaign stopping, the deadline passed).
        case writeFinalResult(ResultRecord)
        /// Journal the record as sent and submit it to the transport.
        case submit(PendingSend)

        /// How the run's record count changes: a skipped record was counted by the run being resumed.
        var recordCountChange: Int {
            if case .skip = self { return 0 }
            return 1
        }
    }

    /// The configuration's settings it reads (kept apart: a copy of the whole configuration a record costs more
    /// than the decision).
    let allowDuplicates: Bool
    let resendInDoubt: Bool
    /// Why the run is stopping, if it is.
    let stopCause: CampaignSummary.Ending?

    init(configuration: borrowing DispatcherConfiguration, stopCause: CampaignSummary.Ending?) {
        allowDuplicates = configuration.allowDuplicates
        resendInDoubt = configuration.resendInDoubt
        self.stopCause = stopCause
    }

    /// The effect of taking `record`.
    /// - Parameters:
    ///   - resume: what the run being resumed knew of the record (`.fresh` for a new run).
    ///   - resumedSends: how often the runs being resumed sent it (the attempts of its in-doubt line).
    ///   - firstOccurrence: whether a valid record's (token, topic) pair is new in this run; ignored with
    ///     `allowDuplicates` and for invalid records.
    ///   - answeredBefore: for a valid record whose pair an earlier result file answers for (`--skip-delivered`,
    ///     `EarlierDeliveries`), the `duplicate` line's detail naming that line; such a record is never sent.
    /// Consumes `record`, so its notification moves into the pending send instead of being copied.
    func effect(
        for record: consuming CampaignRecord, resume: ResumeStatus, resumedSends: Int, firstOccurrence: Bool,
        answeredBefore: String? = nil
    ) -> Effect {
        if resume == .finished { return .skip }
        switch record.content {
        case .invalid(let error, let token, let topic):
            return .writeFinalResult(
                ResultRecord(
                    key: record.key, outcome: .inputError, token: token, topic: topic,
                    reason: error.code.rawValue, detail: error.detail))
        case .notification(let notification):
            if let answeredBefore {
                return .writeFinalResult(
                    ResultRecord(
                        key: record.key, outcome: .duplicate, token: notification.token.hex,
                        topic: notification.topic.value, detail: answeredBefore))
            }
            guard allowDuplicates || firstOccurrence else {
                return .writeFinalResult(
                    ResultRecord(
                        key: record.key, outcome: .duplicate, token: notification.token.hex,
                        topic: notification.topic.value, detail: "same token and topic as an earlier record"))
            }
            var send = PendingSend(key: record.key, notification: notification)
            if resume == .inDoubt && !resendInDoubt {
                send.attempts = resumedSends
                return .writeFinalResult(send.finalResult(.inDoubt, detail: "sent before the crash, never answered"))
            }
            if let stopCause {
                let why: String
                switch stopCause {
                case .deadlinePassed: return .writeFinalResult(send.finalResultWithoutAnswer(stoppedBy: stopCause))
                case .stoppedEarly(let reason): why = reason
                case .interrupted, .completed: why = "interrupted"
                }
                return .writeFinalResult(send.finalResult(.notSent, detail: "campaign stopped: \(why)"))
            }
            return .submit(consume send)
        }
    }
}
