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
///
/// The writer is the one place a record's file index becomes the `file` path, through `inputFiles`.
public final class ResultWriter {
    /// How result lines are written.
    public let format: ResultFormat
    /// What the records' file indexes mean.
    public let inputFiles: InputFileList
    /// Buffered bytes past which the writer flushes by itself.
    public static let autoFlushBytes = 1 << 20
    /// The buffer reserved up front.
    static let initialCapacity = 64 * 1024
    /// Records written (buffered or flushed).
    @exclusivity(unchecked)
    public private(set) var recordsWritten = 0
    /// Bytes of a torn last line that opening in `.append` mode cut off.
    public let droppedTornBytes: Int
    /// The kept fields a CSV file has columns for, after `payload` (NDJSON lines carry each record's own).
    public let keptNames: [String]
    /// Whether CSV rows have the `apns_unique_id` column: false only when continuing a CSV file whose header,
    /// written before the column existed, lacks it (its rows must keep matching their header).
    public let csvUniqueIDColumn: Bool

    private let output: BufferedOutput
    /// The NDJSON lines' shared start for the file of the last record written, and that file's index.
    @exclusivity(unchecked)
    private var opening: [UInt8] = []
    @exclusivity(unchecked)
    private var openingFileIndex: Int?
    /// The middle of the last plain delivery's line, for its topic.
    @exclusivity(unchecked)
    private var deliveryMiddle = DeliveryLineMiddle()

    /// Writes to any sink; `writeHeader` starts a CSV file with its header row.
    public init(
        sink: any ByteSink, format: ResultFormat, inputFiles: InputFileList, writeHeader: Bool = true,
        keptNames: [String] = []
    ) {
        output = BufferedOutput(sink: sink, file: nil, reservingCapacity: Self.initialCapacity)
        self.format = format
        self.inputFiles = inputFiles
        self.droppedTornBytes = 0
        self.keptNames = keptNames
        self.csvUniqueIDColumn = true
        if format == .csv, writeHeader { ResultRecord.appendCSVHeader(keptNames: keptNames, to: &output.bytes) }
    }

    /// Opens a result file: `.create` empties it; `.append` continues it (`send --resume`), first cutting off a
    /// torn last line so that new lines never join it. `-` is standard output.
    public init(
        path: String, format: ResultFormat, mode: AppendOnlyFile.Mode, inputFiles: InputFileList,
        keptNames: [String] = []
    ) throws(PipelineError) {
        let opened = try AppendOnlyFile.open(path, mode: mode)
        output = BufferedOutput(
            sink: opened.file, file: path == "-" ? nil : opened.file, reservingCapacity: Self.initialCapacity)
        self.format = format
        self.inputFiles = inputFiles
        self.droppedTornBytes = opened.droppedTornBytes
        self.keptNames = keptNames
        self.csvUniqueIDColumn = format != .csv || opened.isEmpty || Self.csvHeaderHasUniqueID(path)
        if format == .csv, opened.isEmpty { ResultRecord.appendCSVHeader(keptNames: keptNames, to: &output.bytes) }
    }

    /// Adds one record's line to the buffer.
    public func write(_ record: ResultRecord) throws(PipelineError) {
        switch format {
        case .ndjson:
            if openingFileIndex != record.key.fileIndex {
                opening = ResultRecord.ndjsonOpening(file: inputFiles.path(at: record.key.fileIndex))
                openingFileIndex = record.key.fileIndex
            }
            record.appendNDJSON(opening: opening, deliveryMiddle: &deliveryMiddle, to: &output.bytes)
        case .csv:
            record.appendCSV(
                file: inputFiles.path(at: record.key.fileIndex), keptNames: keptNames,
                uniqueIDColumn: csvUniqueIDColumn,
                to: &output.bytes)
        }
        recordsWritten += 1
        if output.bytes.count >= Self.autoFlushBytes { try flush() }
    }

    /// Whether the header row of the CSV result file at `path` names `apns_unique_id` (true when it cannot be read:
    /// then the file is not one this writer can continue anyway, and the reader reports it).
    static func csvHeaderHasUniqueID(_ path: String) -> Bool {
        guard let file = try? POSIXFile.openForReading(path), let start = file.peek(at: 0, count: 64 * 1024),
            let end = start.firstIndex(of: UInt8(ascii: "\n"))
        else { return true }
        return String(decoding: start[..<end], as: UTF8.self).split(separator: ",").contains { name in
            name.trimmingSpaces() == "apns_unique_id"
        }
    }

    /// Writes what is buffered (one write(2), looping only on short writes).
    public func flush() throws(PipelineError) { try output.flush() }

    /// Forces what was flushed to the disk (fdatasync); nothing to do for standard output or memory.
    public func synchronize() throws(PipelineError) { try output.synchronize() }

    /// Bytes waiting for `flush()`.
    public var bufferedByteCount: Int { output.bytes.count }
}

// MARK: - DeliveryLineMiddle

/// The middle of a plain delivery's result line for one topic, `","topic":"<topic>","outcome":"delivered",
/// "status":200` (from the token's closing quote to the status), made once and reused while the topic stays the
/// same: a campaign's lines mostly share one topic, so each line is spared the topic's escape check and two
/// appends. `ResultWriter` keeps one; `ResultRecord.appendNDJSON` brings it up to date.
struct DeliveryLineMiddle {
    /// The topic `bytes` were made for; nil before the first.
    private(set) var topic: String?
    private(set) var bytes: [UInt8] = []

    /// Remakes `bytes` when `topic` is not the one they were made for.
    mutating func update(for topic: String) {
        guard topic != self.topic else { return }
        var bytes: [UInt8] = []
        bytes.append(contentsOf: #"","topic":""#.utf8)
        JSONText.appendStringContents(topic, to: &bytes)
        bytes.append(UInt8(ascii: "\""))  // the topic's closing quote
        ResultRecord.deliveredWith200.withUTF8Buffer { bytes.append(contentsOf: $0) }
        self.bytes = bytes
        self.topic = topic
    }
}
