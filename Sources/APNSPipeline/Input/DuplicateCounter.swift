import APNSCore

/// Counts the duplicate (device token, topic) pairs among the valid records a reader yields, on a thread of its
/// own (`DuplicateCountingThread`): the reading thread hands the pairs over in batches, in input order, and the
/// counting thread's `DuplicateFilter` records them in that order, so the count is the one a single thread gets,
/// while the reading and the filter's table each have a core. A scratch-file failure on the counting thread is
/// thrown by the next hand-over or by `finish`.
public struct DuplicateCounter: ~Copyable {
    /// Pairs a batch hands over: each hand-over may wake the counting thread (a system call), so a few thousand.
    static let batchSize = 4_096

    private let thread: DuplicateCountingThread
    private var topicIDs = TopicIDs()
    private var batch = PairBatch(capacity: DuplicateCounter.batchSize)

    /// - Parameter scratchDirectory: where the filter's unlinked scratch file goes (`DuplicateFilter`).
    public init(scratchDirectory: String) {
        thread = DuplicateCountingThread(scratchDirectory: scratchDirectory)
    }

    /// The test seam: a filter with `fingerprintBits` (see `DuplicateFilter`).
    init(scratchDirectory: String, fingerprintBits: Int) {
        thread = DuplicateCountingThread(scratchDirectory: scratchDirectory, fingerprintBits: fingerprintBits)
    }

    /// Counts the notification's pair; `progress` (the reader's) is asked for when a batch is handed over.
    public mutating func add(_ notification: PushNotification, progress: @autoclosure () -> ReadProgress?) throws(PipelineError) {
        batch.append(notification.token, topicID: topicIDs.id(of: notification.topic))
        if batch.count == Self.batchSize { try handOver(progress: progress()) }
    }

    /// Waits for every pair handed over to be counted; returns how many were copies of an earlier pair.
    public consuming func finish(progress: ReadProgress?) throws(PipelineError) -> Int {
        if batch.count > 0 { try handOver(progress: progress) }
        return try thread.finish()
    }

    private mutating func handOver(progress: ReadProgress?) throws(PipelineError) {
        batch.progress = progress
        var full = thread.emptyBatch() ?? PairBatch(capacity: Self.batchSize)
        swap(&full, &batch)
        try thread.count(full)
    }

    deinit {
        thread.stop()  // after `finish`, or when the reader threw: either way the thread ends
    }
}
