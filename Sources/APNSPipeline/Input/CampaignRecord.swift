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

    public var key: RecordKey
    public var content: Content

    public init(key: RecordKey, content: Content) {
        self.key = key
        self.content = content
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
