import APNSCore

/// One record's final result, from the dispatcher (or `validate`) to the result file and back (`replay`,
/// `prune`, `report`, `send --resume`): one line of a result file.
///
/// Fields, in the order they are written (NDJSON omits absent ones; CSV leaves them empty):
/// `file`, `line`, `token`, `topic`, `outcome`, `status`, `reason`, `detail`, `apns_id`, `timestamp`, `attempts`,
/// then what `replay` needs to send the record again: `push_type`, `priority`, `expiration`, `collapse_id`,
/// `payload` (the payload bytes as sent; in NDJSON embedded as raw JSON, in CSV as a quoted cell). The record
/// carries its `RecordKey`; only `ResultWriter` turns the key's file index into the `file` path (and
/// `ResultReader` turns it back), through the run's `InputFileList`.
public struct ResultRecord: Sendable, Hashable {
    /// The input record: file index and 1-based line.
    public var key: RecordKey
    /// The token as sent (lowercase hex), or as written for an invalid record.
    public var token: String?
    public var topic: String?
    public var outcome: RecordOutcome
    /// The HTTP status of the last answer.
    public var status: Int?
    /// The APNs reason, or the `InputError` code of an invalid record.
    public var reason: String?
    /// Human text: the input error, the transport failure, why the campaign stopped.
    public var detail: String?
    public var apnsID: String?
    /// For 410 answers: milliseconds since the epoch at which APNs last saw the token invalid.
    public var timestamp: Int64?
    /// Requests that reached the wire for this record.
    public var attempts: Int
    public var pushType: PushType?
    public var priority: Priority?
    /// Epoch seconds.
    public var expiration: Int64?
    public var collapseID: String?
    /// The payload bytes exactly as sent.
    public var payload: [UInt8]?

    /// The field names, in the order they are written (the CSV header).
    public static let fieldNames = [
        "file", "line", "token", "topic", "outcome", "status", "reason", "detail", "apns_id", "timestamp", "attempts",
        "push_type", "priority", "expiration", "collapse_id", "payload",
    ]
}

extension ResultRecord {
    /// The one constructor of a record's result, for `send`, `replay` and `validate` alike. When `notification`
    /// is given and the outcome is one `replay` sends again (`RecordOutcome.isReplayable`), the line also
    /// carries the replay fields, so the result file alone is enough to send the record again, and the apns-id
    /// the notification was sent with when no answer gave one; every other line stays short. The token and topic
    /// default to the notification's.
    ///
    /// In an extension, so the struct keeps its implicit memberwise initializer, which this one calls with every
    /// field at once: assigning the fields one by one here made the compiler copy the finished record and release
    /// the original (a dozen reference-count operations a result).
    public init(
        key: RecordKey, outcome: RecordOutcome, token: String? = nil, topic: String? = nil, status: Int? = nil,
        reason: String? = nil, detail: String? = nil, apnsID: String? = nil, timestamp: Int64? = nil,
        attempts: Int = 0, notification: PushNotification? = nil
    ) {
        let replayed = Self.carriesNotification(outcome, status: status) ? notification : nil
        self.init(
            key: key, token: token ?? notification?.token.hex, topic: topic ?? notification?.topic.value,
            outcome: outcome, status: status, reason: reason, detail: detail,
            apnsID: apnsID ?? replayed?.apnsID?.description, timestamp: timestamp, attempts: attempts,
            pushType: replayed?.pushType, priority: replayed?.priority, expiration: replayed?.expiration?.epochSeconds,
            collapseID: replayed?.collapseID?.value, payload: replayed?.payload)
    }

    /// Whether a line carries its notification's headers and payload: every line `replay` sends by default
    /// (retryable, not sent, in doubt), and requests APNs rejected (`input_error` with a status), which
    /// `replay --topic` or `--push-type` sends again when the rejection was the campaign's setting's fault.
    public static func carriesNotification(_ outcome: RecordOutcome, status: Int?) -> Bool {
        outcome.isReplayable || (outcome == .inputError && status != nil)
    }

    /// The notification to send again (`replay`), rebuilt from the line alone and validated like a campaign
    /// record. The apns-id is reused when the line has one, so a replayed push keeps its identity; one that is not
    /// a UUID is an input error, never silently replaced.
    public func replayNotification() throws(InputError) -> PushNotification {
        guard let token else { throw InputError(.tokenMissing, "result line has no token") }
        guard let topic else { throw InputError(.topicMissing, "result line has no topic") }
        guard let payload else {
            throw InputError(.payloadMissing, "result line has no payload (only lines of records not delivered carry one)")
        }
        let notification = PushNotification(
            token: try DeviceToken(parsing: token),
            topic: try Topic(validating: topic),
            pushType: pushType ?? .alert,
            priority: priority,
            expiration: try expiration.map { value throws(InputError) in try Expiration(epochSeconds: value) },
            collapseID: try collapseID.map { value throws(InputError) in try CollapseID(validating: value) },
            apnsID: try apnsID.map { value throws(InputError) in try APNSID(parsing: value) },
            payload: payload
        )
        try notification.validate()
        return notification
    }
}
