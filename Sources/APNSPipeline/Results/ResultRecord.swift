import APNSCore

/// One line of a result file: what happened to one input record.
///
/// Fields, in the order they are written (NDJSON omits absent ones; CSV leaves them empty):
/// `file`, `line`, `token`, `topic`, `outcome`, `status`, `reason`, `detail`, `apns_id`, `timestamp`, `attempts`,
/// then what `replay` needs to send the record again: `push_type`, `priority`, `expiration`, `collapse_id`,
/// `payload` (the payload bytes as sent; in NDJSON embedded as raw JSON, in CSV as a quoted cell).
public struct ResultRecord: Sendable, Hashable {
    /// The input file as given on the command line.
    public var file: String
    /// The record's 1-based line in that file.
    public var line: Int
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

    public init(
        file: String, line: Int, token: String? = nil, topic: String? = nil, outcome: RecordOutcome,
        status: Int? = nil, reason: String? = nil, detail: String? = nil, apnsID: String? = nil,
        timestamp: Int64? = nil, attempts: Int = 0, pushType: PushType? = nil, priority: Priority? = nil,
        expiration: Int64? = nil, collapseID: String? = nil, payload: [UInt8]? = nil
    ) {
        self.file = file
        self.line = line
        self.token = token
        self.topic = topic
        self.outcome = outcome
        self.status = status
        self.reason = reason
        self.detail = detail
        self.apnsID = apnsID
        self.timestamp = timestamp
        self.attempts = attempts
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.payload = payload
    }

    /// The result of a valid record. Every outcome except `delivered` carries the replay fields, so the result
    /// file alone is enough to send the record again; a `delivered` line stays short. The apns-id is the
    /// answer's, or the one the notification was sent with.
    public init(
        file: String, line: Int, notification: PushNotification, outcome: RecordOutcome, status: Int? = nil,
        reason: String? = nil, detail: String? = nil, apnsID: String? = nil, timestamp: Int64? = nil, attempts: Int = 0
    ) {
        self.init(
            file: file, line: line, token: notification.token.hex, topic: notification.topic.value, outcome: outcome,
            status: status, reason: reason, detail: detail, apnsID: apnsID ?? notification.apnsID?.description,
            timestamp: timestamp, attempts: attempts
        )
        if outcome != .delivered {
            pushType = notification.pushType
            priority = notification.priority
            expiration = notification.expiration?.epochSeconds
            collapseID = notification.collapseID?.value
            payload = notification.payload
        }
    }

    /// The result of an invalid record: outcome `input_error`, the error's code as reason and its detail.
    public init(file: String, line: Int, error: InputError, tokenText: String?, topicText: String?) {
        self.init(
            file: file, line: line, token: tokenText, topic: topicText, outcome: .inputError,
            reason: error.code.rawValue, detail: error.detail
        )
    }
}
