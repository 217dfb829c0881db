import APNSCore

/// One valid record on its way: its notification, how often it has been tried, and the last answer it got.
struct PendingSend {
    let key: RecordKey
    let notification: PushNotification
    /// Sends that reached the wire and got an answer or lost one.
    var attempts = 0
    /// Sends the server never processed (refused streams, above a GOAWAY, never sent): not counted as attempts.
    var unprocessed = 0
    var lastStatus: Int?
    var lastReason: String?
    var lastDetail: String?
    /// When the current send started (monotonic seconds), for latency.
    var startedAt = 0.0

    init(key: RecordKey, notification: PushNotification) {
        self.key = key
        self.notification = notification
    }
}

extension PendingSend {
    /// The record's final result, as its last answer left it (`apnsID` and `timestamp` from that answer).
    func finalResult(
        _ outcome: RecordOutcome, detail: String?, apnsID: String? = nil, timestamp: Int64? = nil
    ) -> ResultRecord {
        ResultRecord(
            key: key, outcome: outcome, token: notification.token.hex, topic: notification.topic.value,
            status: lastStatus, reason: lastReason, detail: detail, apnsID: apnsID, timestamp: timestamp,
            attempts: attempts, notification: outcome.isReplayable ? notification : nil)
    }
}
