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
