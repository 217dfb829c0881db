import APNSCore

/// A reader in front of the run's own, for a run given several provider keys: a valid record whose topic no key
/// covers (`TopicKeyRoutes.uncovered`) becomes an invalid one, `input_error` `TopicNotCovered` with the detail that
/// names the topic and the keys' bundle ids, so it ends in its own result line instead of reaching the transport.
/// Everything else passes through as it is.
public final class TopicCoverageReader: RecordReader {
    private let inner: any RecordReader
    private let routes: TopicKeyRoutes
    /// The last topic found covered: a campaign's records mostly share a few topics, so most records cost one
    /// comparison.
    private var lastCovered: Topic?

    /// A reader of `inner`'s records that checks each topic against `routes`.
    public init(_ inner: any RecordReader, routes: TopicKeyRoutes) {
        self.inner = inner
        self.routes = routes
    }

    /// How far the inner reader has read its inputs.
    public var readProgress: ReadProgress? { inner.readProgress }

    /// Prepares the inner reader; throws when its inputs cannot be opened.
    public func prepareToStart() throws(PipelineError) {
        try inner.prepareToStart()
    }

    /// The inner reader's next record; nil at the end.
    public func nextRecord() throws -> CampaignRecord? {
        guard var record = try inner.nextRecord() else { return nil }
        guard let notification = record.notification, notification.topic != lastCovered else { return record }
        if let error = routes.uncovered(notification.topic) {
            record.content = .invalid(error, tokenText: notification.token.hex, topicText: notification.topic.value)
        } else {
            lastCovered = notification.topic
        }
        return record
    }
}
