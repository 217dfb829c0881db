import APNSCore

/// Counts the duplicate (device token, topic) pairs among the valid records a reader yields, for `validate`. With
/// a core to spare it counts on a thread of its own (`DuplicateCountingThread`): the reading thread hands the pairs
/// over in batches, in input order, and the counting thread's `DuplicateFilter` records them in that order, so the
/// count is the one a single thread gets while the reading and the filter's table each have a core. Otherwise it
/// stages the pairs in its own filter, `DuplicateCountingThread.readAheadGroup` at a time. A scratch-file failure
/// is thrown by `add` (on the counting thread's side: by the next hand-over) or by `finish`.
public struct DuplicateCounter: ~Copyable {
    /// Pairs a batch hands over: each hand-over may wake the counting thread (a system call), so a few thousand.
    static let batchSize = 4_096

    /// Counting here: the filter, and the copies it has seen.
    private var filter: DuplicateFilter?
    private var seen = 0
    /// Counting on a thread: the thread, the batch being filled, and the topics' ids.
    private let thread: DuplicateCountingThread?
    private var batch = PairBatch(capacity: 0)
    private var topicIDs = TopicIDs()

    /// - Parameters:
    ///   - scratchDirectory: where the filter's unlinked scratch file goes (`DuplicateFilter`).
    ///   - onItsOwnThread: count on a thread of its own (when the process may use two cores or more).
    public init(scratchDirectory: String, onItsOwnThread: Bool) {
        self.init(scratchDirectory: scratchDirectory, onItsOwnThread: onItsOwnThread, fingerprintBits: 24)
    }

    /// `fingerprintBits` below 24 make fingerprints collide, for tests (see `DuplicateFilter`).
    init(scratchDirectory: String, onItsOwnThread: Bool, fingerprintBits: Int) {
        if onItsOwnThread {
            thread = DuplicateCountingThread(scratchDirectory: scratchDirectory, fingerprintBits: fingerprintBits)
            batch = PairBatch(capacity: Self.batchSize)
        } else {
            thread = nil
            filter = DuplicateFilter(scratchDirectory: scratchDirectory, fingerprintBits: fingerprintBits)
        }
    }

    /// Counts the pair of `topic` and the token whose stored form (`DeviceToken.hex`'s bytes) is `bytes[hex]`, as
    /// `CampaignReader.checkRecords` hands it over; `progress` (the reader's) is asked for when the filter may size
    /// its table.
    public mutating func add(
        tokenBytes bytes: [UInt8], hex: Range<Int>, topic: Topic, progress: @autoclosure () -> ReadProgress?
    ) throws(PipelineError) {
        if thread == nil {
            filter?.stage(hex: bytes.span.extracting(hex), topic: topic)
            if filter?.stagedCount == DuplicateCountingThread.readAheadGroup {
                seen += try filter?.insertStaged() ?? 0
                filter?.sizeForInput(progress())
            }
            return
        }
        batch.append(hex: bytes[hex], topicID: topicIDs.id(of: topic))
        if batch.count == Self.batchSize { try handOver(progress: progress()) }
    }

    /// Counts what is left, waiting for the counting thread if there is one; returns how many pairs were copies of
    /// an earlier one.
    public consuming func finish(progress: ReadProgress?) throws(PipelineError) -> Int {
        guard let thread else { return try seen + (filter?.insertStaged() ?? 0) }
        if batch.count > 0 { try handOver(progress: progress) }
        return try thread.finish()
    }

    private mutating func handOver(progress: ReadProgress?) throws(PipelineError) {
        guard let thread else { return }
        batch.progress = progress
        var full = thread.emptyBatch() ?? PairBatch(capacity: Self.batchSize)
        swap(&full, &batch)
        try thread.count(full)
    }

    deinit {
        thread?.stop()  // after `finish`, or when the reader threw: either way the thread ends
    }
}
