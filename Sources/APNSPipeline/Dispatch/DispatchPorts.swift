import APNSCore

/// Identifies one input record across runs: the input file's position on the command line and the record's
/// 1-based line number in it. Packs into one `UInt64` for compact sets.
public struct DispatchKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let fileIndex: Int
    public let line: Int

    public init(fileIndex: Int, line: Int) {
        self.fileIndex = fileIndex
        self.line = line
    }

    /// The key as one number: 24 bits of file index, 40 bits of line.
    public var packed: UInt64 { UInt64(truncatingIfNeeded: fileIndex) << 40 | UInt64(truncatingIfNeeded: line) & 0xFF_FFFF_FFFF }

    public static func < (lhs: DispatchKey, rhs: DispatchKey) -> Bool { lhs.packed < rhs.packed }
    public var description: String { "\(fileIndex):\(line)" }
}

/// One input record as the dispatcher sees it: a notification ready to send, or why it cannot be sent.
public struct DispatchRecord: Sendable {
    public enum Content: Sendable {
        case notification(PushNotification)
        /// The record is invalid; the token and topic text are echoed in its result line when they were readable.
        case invalid(InputError, tokenText: String?, topicText: String?)
    }

    public var key: DispatchKey
    public var content: Content

    public init(key: DispatchKey, content: Content) {
        self.key = key
        self.content = content
    }
}

/// The final result of one record, as the dispatcher hands it to the result writer.
public struct DispatchResult: Sendable {
    public var key: DispatchKey
    public var outcome: RecordOutcome
    /// The token as sent (lowercase hex), or the token text of an invalid record.
    public var token: String?
    public var topic: String?
    public var status: Int?
    /// The APNs reason, or the `InputError` code of an invalid record.
    public var reason: String?
    /// Human-readable detail: the input error, the transport failure, why the campaign stopped.
    public var detail: String?
    public var apnsID: String?
    /// For 410 answers: milliseconds since the epoch.
    public var timestamp: Int64?
    public var attempts: Int
    /// For outcomes `replay` sends again: the notification, so the result file alone is enough to replay it.
    public var notification: PushNotification?

    public init(
        key: DispatchKey, outcome: RecordOutcome, token: String?, topic: String?, status: Int? = nil,
        reason: String? = nil, detail: String? = nil, apnsID: String? = nil, timestamp: Int64? = nil,
        attempts: Int = 0, notification: PushNotification? = nil
    ) {
        self.key = key
        self.outcome = outcome
        self.token = token
        self.topic = topic
        self.status = status
        self.reason = reason
        self.detail = detail
        self.apnsID = apnsID
        self.timestamp = timestamp
        self.attempts = attempts
        self.notification = notification
    }
}

/// Where the dispatcher's records come from, in input order.
public protocol DispatchRecordSource: AnyObject {
    /// The next record, or nil when every input is exhausted. Throws only for failures that end the run
    /// (an input file that cannot be read); bad records come back as `.invalid`.
    func nextRecord() throws -> DispatchRecord?
    /// How far the source has read its files, when it can tell (`nil` by default).
    var readProgress: ReadProgress? { get }
}

/// Where the dispatcher's results and journal entries go. Writes may be buffered until `flush()`.
public protocol DispatchResultSink: AnyObject {
    /// One record's final result line.
    func write(_ result: DispatchResult) throws
    /// The record is about to leave for APNs (journaled so that after a crash it is known to be in doubt).
    func journalSent(_ key: DispatchKey) throws
    /// The record was answered with a retryable failure: safe to send again after a crash.
    func journalRetryable(_ key: DispatchKey) throws
    /// Makes everything written so far durable against a crash of this process (write(2) to the files).
    func flush() throws
}

/// What a resumed run knows about records from the run it continues.
public enum ResumeStatus: Sendable, Equatable {
    /// Not seen before: process normally.
    case fresh
    /// Has its final result line already: skip it.
    case finished
    /// Was sent and never answered before the crash: it may have been delivered.
    case inDoubt
    /// Was answered retryable before the crash: safe to send again.
    case resend
}

/// The event loop's clock and timers, as the dispatcher needs them.
public protocol LoopScheduler: AnyObject {
    /// Monotonic seconds.
    var now: Double { get }
    /// Runs `body` on the loop thread after `delay` seconds (0: on the next loop turn).
    func schedule(after delay: Double, _ body: @escaping () -> Void)
}
