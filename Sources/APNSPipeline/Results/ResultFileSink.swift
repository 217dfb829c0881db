import APNSCore

/// The dispatcher's result sink over a result file and its journal (the writer turns each result's key into its
/// `file` path).
///
/// `flush()` writes the results first, then the journal: if the process dies between the two, the answers of
/// the turn are safe and the requests whose `s` lines were lost have not left yet (the network flush comes after).
/// With `groupCommit` set (`--durable`), it also forces the files to the disk as `GroupCommit` says.
public final class ResultFileSink: ResultSink {
    public let writer: ResultWriter
    public let journal: SendJournal?
    /// When to fdatasync (nil: never), and the monotonic clock it reads.
    public var groupCommit: GroupCommit?
    public var clock: () -> Double = { 0 }
    private var sendsJournaled = 0

    public init(writer: ResultWriter, journal: SendJournal?) {
        self.writer = writer
        self.journal = journal
    }

    public func write(_ result: ResultRecord) throws {
        try writer.write(result)
    }

    public func journalSent(_ key: RecordKey) throws {
        journal?.recordSent(fileIndex: key.fileIndex, line: key.line)
        sendsJournaled += 1
    }

    public func journalRetryable(_ key: RecordKey) throws {
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
