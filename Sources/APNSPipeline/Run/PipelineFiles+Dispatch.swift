import APNSCore

// Adapters between the file side of the pipeline and the dispatcher's ports (`DispatchPorts.swift`).

extension CampaignRecord {
    /// The record as the dispatcher takes it.
    public var dispatchRecord: DispatchRecord {
        let key = DispatchKey(fileIndex: source, line: line)
        switch content {
        case .notification(let notification):
            return DispatchRecord(key: key, content: .notification(notification))
        case .invalid(let error):
            return DispatchRecord(key: key, content: .invalid(error, tokenText: tokenText, topicText: topicText))
        }
    }
}

extension CampaignReader: DispatchRecordSource {
    public func nextRecord() throws -> DispatchRecord? {
        try next()?.dispatchRecord
    }
}

extension ResumeState {
    /// What the earlier run knew of a record.
    public func status(_ key: DispatchKey) -> ResumeStatus {
        status(fileIndex: key.fileIndex, line: key.line)
    }
}

extension ResultRecord {
    /// The result line for a dispatcher result; `file` is the path of the input it names.
    public init(_ result: DispatchResult, file: String) {
        self.init(
            file: file, line: result.key.line, token: result.token, topic: result.topic, outcome: result.outcome,
            status: result.status, reason: result.reason, detail: result.detail, apnsID: result.apnsID,
            timestamp: result.timestamp, attempts: result.attempts
        )
        if let notification = result.notification {
            pushType = notification.pushType
            priority = notification.priority
            expiration = notification.expiration?.epochSeconds
            collapseID = notification.collapseID?.value
            payload = notification.payload
            if apnsID == nil { apnsID = notification.apnsID?.description }
        }
    }
}

/// The dispatcher's result sink over a result file and its journal.
///
/// `flush()` writes the results first, then the journal: if the process dies between the two, the answers of
/// the turn are safe and the requests whose `s` lines were lost have not left yet (the network flush comes after).
/// With `groupCommit` set (`--durable`), it also forces the files to the disk as `GroupCommit` says.
public final class ResultFileSink: DispatchResultSink {
    public let writer: ResultWriter
    public let journal: SendJournal?
    /// The run's input paths, by file index, as written in the `file` field.
    public let inputPaths: [String]
    /// When to fdatasync (nil: never), and the monotonic clock it reads.
    public var groupCommit: GroupCommit?
    public var clock: () -> Double = { 0 }
    private var sendsJournaled = 0

    public init(writer: ResultWriter, journal: SendJournal?, inputPaths: [String]) {
        self.writer = writer
        self.journal = journal
        self.inputPaths = inputPaths
    }

    public func write(_ result: DispatchResult) throws {
        let index = result.key.fileIndex
        let file = inputPaths.indices.contains(index) ? inputPaths[index] : "#\(index)"
        try writer.write(ResultRecord(result, file: file))
    }

    public func journalSent(_ key: DispatchKey) throws {
        journal?.recordSent(fileIndex: key.fileIndex, line: key.line)
        sendsJournaled += 1
    }

    public func journalRetryable(_ key: DispatchKey) throws {
        journal?.recordRetryable(fileIndex: key.fileIndex, line: key.line)
    }

    public func flush() throws {
        try writer.flush()
        try journal?.flush()
        groupCommit?.flushed(results: writer.recordsWritten, sends: sendsJournaled)
        try synchronizeIfDue()
    }

    /// Forces to the disk what group commit says is due; `final` syncs everything written (the run's end).
    /// Called after each flush, and by a timer so that result lines written just before a quiet spell reach the
    /// disk in time.
    public func synchronizeIfDue(final: Bool = false) throws(PipelineError) {
        guard var commit = groupCommit else { return }
        let now = clock()
        let (results, journalDue) = commit.due(now: now, final: final)
        if results { try writer.synchronize() }
        if journalDue { try journal?.synchronize() }
        commit.synchronized(results: results, journal: journalDue, now: now)
        groupCommit = commit
    }
}
