import APNSCore
import Foundation

/// Where the dispatcher's records come from, in input order: `CampaignReader` (campaign files) or
/// `ReplayReader` (result files).
public protocol RecordReader: AnyObject {
    /// The next record, or nil when every input is exhausted. Throws only for failures that end the run
    /// (an input file that cannot be read); bad records come back as `.invalid`.
    func nextRecord() throws -> CampaignRecord?
    /// How far the reader has read its files, when it can tell (`nil` by default).
    var readProgress: ReadProgress? { get }
    /// Checks, before any file of the run is created, what would otherwise fail only once records are read: a
    /// whole-file failure (an input that is a directory, a CSV header without its columns) or a campaign that
    /// cannot send anything (no records at all, no topic anywhere). Throws that failure; does nothing by default.
    func prepareToStart() throws(PipelineError)
}

extension RecordReader {
    /// Does nothing: there is nothing to prepare.
    public func prepareToStart() throws(PipelineError) {}
}

/// Where the dispatcher's results and journal entries go. Writes may be buffered until `flush()`.
public protocol ResultSink: AnyObject {
    /// One record's final result line.
    func write(_ result: ResultRecord) throws
    /// The record is about to leave for APNs (journaled so that after a crash it is known to be in doubt).
    func journalSent(_ key: RecordKey) throws
    /// The record is about to leave, with the digest of what is sent (`SentDigest`), for a run reading a stream.
    func journalSent(_ key: RecordKey, digest: UInt64) throws
    /// The record was answered with a retryable failure: safe to send again after a crash.
    func journalRetryable(_ key: RecordKey) throws
    /// Makes everything written so far durable against a crash of this process (write(2) to the files).
    func flush() throws
}

extension ResultSink {
    /// Sinks that keep no digest journal the send alone.
    public func journalSent(_ key: RecordKey, digest: UInt64) throws { try journalSent(key) }
}

/// What a resumed run knows about records from the run it continues.
public enum ResumeStatus: Sendable, Equatable {
    /// Not seen before: process normally.
    case fresh
    /// Has its final result line already: skip it.
    case finished
    /// Was sent and never answered before the crash: it may have been delivered.
    case inDoubt
    /// Was answered retryable before the crash: safe to send again.
    case resend
}

/// The event loop's clock and timers, as the dispatcher needs them.
public protocol LoopScheduler: AnyObject {
    /// Monotonic seconds.
    var now: Double { get }
    /// Runs `body` on the loop thread after `delay` seconds (0: on the next loop turn).
    func schedule(after delay: Double, _ body: @escaping () -> Void)
    /// The wall clock, UNIX epoch seconds: what a relative expiration is counted from at a record's first send.
    var epochSeconds: Int64 { get }
}

extension LoopScheduler {
    /// The current time, in whole seconds since the epoch.
    public var epochSeconds: Int64 { Int64(Date().timeIntervalSince1970) }
}
