import Foundation
import Synchronization

/// The counting half of `DuplicateCounter`: a thread that owns a `DuplicateFilter`, takes pair batches from a
/// bounded queue in the order they were handed over, and records their pairs in that order. After a scratch-file
/// failure it keeps taking batches (so the hand-over never blocks) and counts nothing more; the failure is thrown to
/// the reading thread. Counted batches go back, emptied, for the reading thread to fill again: a batch is larger
/// than the blocks glibc maps separately, so a new one each time would map and fault in fresh pages.
final class DuplicateCountingThread: Sendable {
    /// Batches waiting at most: the reader runs at most this far ahead.
    static let queuedBatches = 8
    /// Pairs the filter reads ahead together (see `DuplicateFilter.stage`).
    static let readAheadGroup = 32

    private struct Queue {
        var batches: [PairBatch] = []
        var isClosed = false
    }

    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)
    private let space = DispatchSemaphore(value: DuplicateCountingThread.queuedBatches)
    private let emptied = Mutex<[PairBatch]>([])
    private let failure = Mutex<PipelineError?>(nil)
    private let duplicates = Mutex(0)
    private let finished = DispatchSemaphore(value: 0)

    init(scratchDirectory: String, fingerprintBits: Int = 24) {
        let thread = Thread { [self] in
            var filter = DuplicateFilter(scratchDirectory: scratchDirectory, fingerprintBits: fingerprintBits)
            var seen = 0
            var failed = false
            while var batch = take() {
                guard !failed else { continue }
                do throws(PipelineError) {
                    seen += try Self.record(batch, in: &filter)
                } catch {
                    failed = true
                    failure.withLock { $0 = error }
                }
                batch.removeAll()
                emptied.withLock { $0.append(batch) }
            }
            duplicates.withLock { $0 = seen }
            finished.signal()
        }
        thread.name = "apns-bulk duplicates"
        thread.start()
    }

    /// Queues `batch`, waiting while the queue is full; throws the thread's failure if it has had one.
    func count(_ batch: PairBatch) throws(PipelineError) {
        if let error = failure.withLock({ $0 }) { throw error }
        space.wait()
        queue.withLock { $0.batches.append(batch) }
        available.signal()
    }

    /// A counted batch, emptied, if one is back.
    func emptyBatch() -> PairBatch? {
        emptied.withLock { $0.popLast() }
    }

    /// Waits until every queued batch is counted; returns the copies seen, or throws the thread's failure.
    func finish() throws(PipelineError) -> Int {
        stop()
        finished.wait()
        finished.signal()  // a second wait passes too
        if let error = failure.withLock({ $0 }) { throw error }
        return duplicates.withLock { $0 }
    }

    /// Lets the thread end once it has counted what is queued. Idempotent.
    func stop() {
        let first = queue.withLock { queue in
            defer { queue.isClosed = true }
            return !queue.isClosed
        }
        if first { available.signal() }
    }

    /// The next batch in order, or nil once the queue is closed and empty.
    private func take() -> PairBatch? {
        available.wait()
        let batch = queue.withLock { $0.batches.isEmpty ? nil : $0.batches.removeFirst() }
        if batch != nil { space.signal() }
        return batch
    }

    /// Records the batch's pairs `readAheadGroup` at a time; returns how many were already seen.
    private static func record(_ batch: PairBatch, in filter: inout DuplicateFilter) throws(PipelineError) -> Int {
        var seen = 0
        var first = 0
        while first < batch.count {
            let last = min(first + readAheadGroup, batch.count)
            batch.stage(in: &filter, from: first, to: last)
            seen += try filter.insertStaged()
            first = last
        }
        filter.sizeForInput(batch.progress)
        return seen
    }
}
