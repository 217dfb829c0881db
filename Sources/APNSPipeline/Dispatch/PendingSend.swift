import APNSCore

/// One valid record on its way: its notification, how often it has been tried, and the last answer it got.
///
/// It moves through the dispatcher by value (reader, in-flight table, decision, result), so it is kept to 128
/// bytes, the largest value Swift moves with inline loads and stores; a larger one takes a `memcpy` call per move,
/// about a dozen a request. Hence the narrow counters and one text for the last answer: APNs' reason after an
/// answer, the transport's detail after a failure, never both. When the send went out is kept by the in-flight
/// table, the only place that needs it.
struct PendingSend {
    let key: RecordKey
    /// Its expiration resolved at the first send (`resolveExpiration`), so every retry sends the same header.
    private(set) var notification: PushNotification
    private var storedAttempts: UInt32 = 0
    private var storedUnprocessed: UInt32 = 0
    /// The last answer's HTTP status (three digits), 0 before any answer and after a failure.
    private var storedStatus: UInt16 = 0
    /// The last answer's reason when `storedStatus` is set, else the last failure's detail.
    private var lastText: String?

    init(key: RecordKey, notification: PushNotification) {
        self.key = key
        self.notification = notification
    }

    /// Turns a relative expiration into the epoch it comes to at `now` (epoch seconds); does nothing once resolved,
    /// or for an absolute one. Called before every send, so only the first one counts.
    mutating func resolveExpiration(atEpoch now: @autoclosure () -> Int64) {
        guard let expiration = notification.expiration, expiration.needsResolving else { return }
        notification = notification.replacingExpiration(expiration.resolved(atEpoch: now()))
    }

    /// Sends that reached the wire and got an answer or lost one.
    var attempts: Int {
        get { Int(storedAttempts) }
        set { storedAttempts = UInt32(clamping: newValue) }
    }

    /// Sends the server never processed (refused streams, above a GOAWAY, never sent): not counted as attempts.
    var unprocessed: Int {
        get { Int(storedUnprocessed) }
        set { storedUnprocessed = UInt32(clamping: newValue) }
    }

    /// What the record is when the run ends it without an answer (stopped early, the deadline passed, resends of
    /// unprocessed requests used up): `retryable` once a request of it reached the server; before that
    /// `expired` when the `--not-after` deadline ended it, else `not_sent`. The one place that tells them apart.
    func outcomeWithoutAnswer(stoppedBy cause: CampaignSummary.Ending?) -> RecordOutcome {
        guard attempts == 0 else { return .retryable }
        if case .deadlinePassed = cause { return .expired }
        return .notSent
    }

    /// The last answer's status; nil before any answer and after a transport failure.
    var lastStatus: Int? { storedStatus == 0 ? nil : Int(storedStatus) }

    /// The last answer's reason; nil when it had none, before any answer and after a transport failure.
    var lastReason: String? { storedStatus == 0 ? nil : lastText }

    /// The last transport failure's detail; nil when an answer came after it.
    var lastDetail: String? { storedStatus == 0 ? lastText : nil }

    /// Keeps an answer as the last one: its status (HTTP's three digits) and reason.
    mutating func recordAnswer(status: Int, reason: String?) {
        storedStatus = UInt16(clamping: max(status, 1))
        lastText = reason
    }

    /// Keeps a transport failure as the last outcome, with its detail.
    mutating func recordFailure(detail: String) {
        storedStatus = 0
        lastText = detail
    }
}

extension PendingSend {
    /// The record's final result when a stop (`cause`) ends it without an answer: its outcome as
    /// `outcomeWithoutAnswer` says, its detail naming the deadline that cut it, else the last failure's.
    func finalResultWithoutAnswer(stoppedBy cause: CampaignSummary.Ending?) -> ResultRecord {
        let outcome = outcomeWithoutAnswer(stoppedBy: cause)
        guard case .deadlinePassed(let when) = cause else {
            return finalResult(outcome, detail: lastDetail ?? "campaign stopped")
        }
        let detail =
            outcome == .expired
            ? "not sent by the --not-after deadline \(when)"
            : "not retried: the --not-after deadline \(when) came first"
        return finalResult(outcome, detail: detail)
    }

    /// The record's final result, as its last answer left it (`apnsID` and `timestamp` from that answer).
    func finalResult(
        _ outcome: RecordOutcome, detail: String?, apnsID: String? = nil, apnsUniqueID: String? = nil,
        timestamp: Int64? = nil
    ) -> ResultRecord {
        ResultRecord(
            key: key, outcome: outcome, token: notification.token.hex, topic: notification.topic.value,
            status: lastStatus, reason: lastReason, detail: detail, apnsID: apnsID, apnsUniqueID: apnsUniqueID,
            timestamp: timestamp,
            attempts: attempts + unprocessed,  // every request the record made, resends of unprocessed ones included
            notification: ResultRecord.carriesNotification(outcome, status: lastStatus) ? notification : nil)
    }
}
