import APNSCore

/// The dispatcher's result sink over a result file and its journal (the writer turns each result's key into its
/// `file` path).
///
/// `flush()` writes the results first, then the journal: if the process dies between the two, the answers of
/// the turn are safe and the requests whose `s` lines were lost have not left yet (the network flush comes after).
/// With `groupCommit` set (`--durable`), it also forces the files to the disk as `GroupCommit` says.
public final class ResultFileSink: ResultSink {
    /// The writer of the result file.
    public let writer: ResultWriter
    /// The send journal; nil when the run keeps none.
    public let journal: SendJournal?
    /// When to fdatasync (nil: never), and the monotonic clock it reads.
    @exclusivity(unchecked)
    public var groupCommit: GroupCommit?
    /// The clock, in seconds, that times flushes.
    public var clock: () -> Double = { 0 }
    @exclusivity(unchecked)
    private var sendsJournaled = 0

    /// A sink writing results to `writer` and sends to `journal`.
    public init(writer: ResultWriter, journal: SendJournal?) {
        self.writer = writer
        self.journal = journal
    }

    /// Writes one final result line; throws when the write fails.
    public func write(_ result: ResultRecord) throws {
        try writer.write(result)
    }

    /// Journals that the record at `key` was sent.
    public func journalSent(_ key: RecordKey) throws {
        journal?.recordSent(fileIndex: key.fileIndex, line: key.line)
        sendsJournaled += 1
    }

    /// Journals that the record at `key` was sent, with the digest of what was sent.
    public func journalSent(_ key: RecordKey, digest: UInt64) throws {
        journal?.recordSent(fileIndex: key.fileIndex, line: key.line, digest: digest)
        sendsJournaled += 1
    }

    /// Journals that the record at `key` got a retryable answer.
    public func journalRetryable(_ key: RecordKey) throws {
        journal?.recordRetryable(fileIndex: key.fileIndex, line: key.line)
    }

    /// Writes out buffered result and journal lines; throws when a write fails.
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

// MARK: - GroupCommit

/// When a `--durable` run forces its files to the disk (fdatasync), many records to one sync. The journal is
/// synced whenever it names new requests, before they leave (the flush before the network), so a power cut never
/// forgets a request that went out; result lines at the latest `interval` seconds or `maximumRecords` lines after
/// they were written, and at the end of the run. A plain state machine over counts and a clock: no I/O.
public struct GroupCommit: Sendable, Equatable {
    /// Seconds a flushed result line may wait for its sync.
    public let interval: Double
    /// Result lines that may wait for a sync.
    public let maximumRecords: Int
    private var lastResultsSync: Double
    private var resultsFlushed = 0
    private var resultsSynced = 0
    private var sendsFlushed = 0
    private var sendsSynced = 0

    /// A flush policy: every `interval` seconds or `maximumRecords` records.
    public init(interval: Double = 0.05, maximumRecords: Int = 4096, startedAt: Double) {
        self.interval = interval
        self.maximumRecords = maximumRecords
        lastResultsSync = startedAt
    }

    /// After a flush: result lines and journaled sends written so far (running totals).
    public mutating func flushed(results: Int, sends: Int) {
        resultsFlushed = results
        sendsFlushed = sends
    }

    /// Which files need an fdatasync now (`final`: the run is ending, sync whatever is not on disk).
    public func due(now: Double, final: Bool = false) -> (results: Bool, journal: Bool) {
        let waiting = resultsFlushed - resultsSynced
        let results = waiting > 0 && (final || waiting >= maximumRecords || now - lastResultsSync >= interval)
        return (results, sendsFlushed > sendsSynced)
    }

    /// Records the syncs done.
    public mutating func synchronized(results: Bool, journal: Bool, now: Double) {
        if results {
            resultsSynced = resultsFlushed
            lastResultsSync = now
        }
        if journal { sendsSynced = sendsFlushed }
    }
}
