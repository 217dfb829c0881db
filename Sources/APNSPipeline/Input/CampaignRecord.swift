import APNSCore

/// One input record from reader to dispatcher (a campaign file's line, or a result line `replay` sends again):
/// its key, and either the notification to send or why it cannot be sent. Every record read (valid or not)
/// gets exactly one result line.
public struct CampaignRecord: Sendable {
    /// What the record holds.
    public enum Content: Sendable {
        /// Valid: every header value and the payload checked (`PushNotification.validate()` passes). The payload
        /// is empty when the reader was told not to keep payloads (`CampaignReaderOptions.keepsPayloads`).
        case notification(PushNotification)
        /// Invalid: not sent; the error's code is the result line's reason. The token and the record's own topic
        /// as written, when it had them, are echoed in the result line.
        case invalid(InputError, tokenText: String?, topicText: String?)
    }

    /// Where the record stands in the inputs.
    public var key: RecordKey
    /// The notification, or why the record is invalid.
    public var content: Content
    /// The values of the run's `--keep` fields (`KeptFields`), copied into the record's result line; nil when
    /// the run keeps none.
    public var kept: KeptValues?

    /// A record from its key, its content and the fields kept for its result line.
    public init(key: RecordKey, content: Content, kept: KeptValues? = nil) {
        self.key = key
        self.content = content
        self.kept = kept
    }

    /// The notification, for valid records.
    public var notification: PushNotification? {
        if case .notification(let notification) = content { return notification }
        return nil
    }

    /// The error, for invalid records.
    public var error: InputError? {
        if case .invalid(let error, _, _) = content { return error }
        return nil
    }

    /// For invalid records: the token as written, when the record had one.
    public var tokenText: String? {
        if case .invalid(_, let tokenText, _) = content { return tokenText }
        return nil
    }

    /// For invalid records: the record's own topic as written, when it had one.
    public var topicText: String? {
        if case .invalid(_, _, let topicText) = content { return topicText }
        return nil
    }
}

// MARK: - RecordKey

/// Names one input record across runs: the input file's position in the run's list of inputs (0-based) and the
/// record's 1-based line in it (for CSV: the physical line where the record starts). Packs into one `UInt64`.
public struct RecordKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The input file's zero-based index in the campaign's inputs.
    public let fileIndex: Int
    /// The record's line in that file.
    public let line: Int

    /// The key of the record at `line` of input `fileIndex`.
    public init(fileIndex: Int, line: Int) {
        self.fileIndex = fileIndex
        self.line = line
    }

    /// The key as one number: 24 bits of file index, 40 bits of line.
    public var packed: UInt64 {
        UInt64(truncatingIfNeeded: fileIndex) << 40 | UInt64(truncatingIfNeeded: line) & 0xFF_FFFF_FFFF
    }

    /// Orders keys by file, then by line.
    public static func < (lhs: RecordKey, rhs: RecordKey) -> Bool { lhs.packed < rhs.packed }
    /// The key as `file:line`.
    public var description: String { "\(fileIndex):\(line)" }
}
