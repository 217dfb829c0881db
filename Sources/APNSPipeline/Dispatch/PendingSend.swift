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
