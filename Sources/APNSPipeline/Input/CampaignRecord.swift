import APNSCore

/// One record read from a campaign file: where it came from, and either the notification to send or why it
/// cannot be sent. Every record read (valid or not) gets exactly one result line.
public struct CampaignRecord: Sendable {
    /// What the record holds.
    public enum Content: Sendable {
        /// Valid: every header value and the payload checked (`PushNotification.validate()` passes).
        case notification(PushNotification)
        /// Invalid: not sent; the error's code is the result line's reason.
        case invalid(InputError)
    }

    /// The input file's position in the run's list of inputs (0-based).
    public var source: Int
    /// The 1-based line number of the record (for CSV: the physical line where the record starts).
    public var line: Int
    public var content: Content
    /// For invalid records: the token as written, when the record had one (echoed in the result line).
    public var tokenText: String?
    /// For invalid records: the record's own topic as written, when it had one.
    public var topicText: String?

    public init(source: Int, line: Int, content: Content, tokenText: String? = nil, topicText: String? = nil) {
        self.source = source
        self.line = line
        self.content = content
        self.tokenText = tokenText
        self.topicText = topicText
    }

    /// The notification, for valid records.
    public var notification: PushNotification? {
        if case .notification(let notification) = content { return notification }
        return nil
    }

    /// The error, for invalid records.
    public var error: InputError? {
        if case .invalid(let error) = content { return error }
        return nil
    }
}
