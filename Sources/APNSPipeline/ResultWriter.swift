/// The format of a result file.
public enum ResultFormat: String, Sendable, Hashable, CaseIterable {
    case ndjson
    case csv
}

/// Writes result lines as answers arrive, in any order, into a reusable buffer that goes out with one write(2)
/// per `flush()` (the dispatcher flushes once per event-loop turn). A `kill -9` loses at most what was not
/// flushed, and may leave a torn last line, which `ResultReader` and `ResumeState` tolerate. Flushed data is in
/// the kernel, so it survives the process; `synchronize()` (fdatasync) makes it survive a power cut.
///
/// A write that fails (a full disk) is rolled back by the file and ends the writer: later flushes throw the
/// same error without writing, so no line can reach the file twice or after a gap.
///
/// The buffer also flushes by itself past `autoFlushBytes`, so memory stays bounded if flushes are rare.
public final class ResultWriter {
    public let format: ResultFormat
    public static let autoFlushBytes = 1 << 20
    /// Records written (buffered or flushed).
    public private(set) var recordsWritten = 0
    /// Bytes of a torn last line that opening in `.append` mode cut off.
    public let droppedTornBytes: Int

    private let sink: any ByteSink
    private let file: POSIXFile?
    private var buffer: [UInt8] = []
    private var failure: PipelineError?

    /// Writes to any sink; `writeHeader` starts a CSV file with its header row.
    public init(sink: any ByteSink, format: ResultFormat, writeHeader: Bool = true) {
        self.sink = sink
        self.file = nil
        self.format = format
        self.droppedTornBytes = 0
        buffer.reserveCapacity(64 * 1024)
        if format == .csv, writeHeader { ResultRecord.appendCSVHeader(to: &buffer) }
    }

    /// Opens a result file: `.create` empties it; `.append` continues it (`send --resume`), first cutting off a
    /// torn last line so that new lines never join it. `-` is standard output.
    public init(path: String, format: ResultFormat, mode: AppendOnlyFile.Mode) throws(PipelineError) {
        let opened = try AppendOnlyFile.open(path, mode: mode)
        self.sink = opened.file
        self.file = path == "-" ? nil : opened.file
        self.format = format
        self.droppedTornBytes = opened.droppedTornBytes
        buffer.reserveCapacity(64 * 1024)
        if format == .csv, opened.isEmpty { ResultRecord.appendCSVHeader(to: &buffer) }
    }

    /// Adds one record's line to the buffer.
    public func write(_ record: ResultRecord) throws(PipelineError) {
        switch format {
        case .ndjson: record.appendNDJSON(to: &buffer)
        case .csv: record.appendCSV(to: &buffer)
        }
        recordsWritten += 1
        if buffer.count >= Self.autoFlushBytes { try flush() }
    }

    /// Writes what is buffered (one write(2), looping only on short writes).
    public func flush() throws(PipelineError) {
        if let failure { throw failure }
        guard !buffer.isEmpty else { return }
        do {
            try sink.write(buffer, count: buffer.count)
        } catch {
            failure = error
            throw error
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Forces what was flushed to the disk (fdatasync); nothing to do for standard output or memory.
    public func synchronize() throws(PipelineError) {
        if let failure { throw failure }
        do {
            try file?.synchronizeData()
        } catch {
            failure = error  // the data may not be on the disk: nothing more is written
            throw error
        }
    }

    /// Bytes waiting for `flush()`.
    public var bufferedByteCount: Int { buffer.count }
}
