/// Reads RFC 4180 CSV as a streaming state machine over byte chunks: quoted fields with `""` escapes and embedded
/// delimiters, newlines and CRLF; CRLF or LF record ends; a UTF-8 byte-order mark at the start is skipped. The
/// delimiter is a comma, a semicolon or a tab: given, or detected from the header row (`CSVDelimiter.detect`).
///
/// Records come back one at a time with the physical line where they start. The current record's fields are
/// unescaped into one reusable buffer (`fieldBytes`, ranges from `field(_:)`), valid until the next call. Memory
/// is bounded: one chunk buffer and at most `maximumRecordLength` bytes of fields; a longer record is reported
/// `tooLong` while the machine keeps tracking quotes to find its real end.
///
/// Leniencies, as most readers have them: a quote inside an unquoted field is data; a lone CR is data; empty
/// lines between records are skipped. Errors are per record: text after a closing quote (`"ab"c`), and a quoted
/// field still open at the end of the input.
public final class CSVReader {
    /// One record: where it starts, how many fields it has, and what is wrong with it, if anything.
    public struct Record: Hashable, Sendable {
        /// What can be wrong with one record.
        public enum Problem: Hashable, Sendable {
            /// A quoted field was still open at the end of the input.
            case unterminatedQuote
            /// Something other than the delimiter or a line end followed a closing quote.
            case textAfterClosingQuote
            /// The record's fields add up to more than `maximumRecordLength` bytes.
            case tooLong
        }

        /// The 1-based physical line where the record starts.
        public let line: Int
        /// Fields in the record.
        public let fieldCount: Int
        /// What is wrong with the record's quoting or length; nil when nothing is.
        public let problem: Problem?
        /// Whether a line end closed the record (false: the input ended first).
        public let isTerminated: Bool
    }

    /// The longest record accepted, in bytes.
    public var maximumRecordLength: Int { machine.maximumRecordLength }
    /// The current record's unescaped field contents, back to back.
    public var fieldBytes: [UInt8] { machine.fieldBytes }
    /// The delimiter the fields are split at: the one given, or, once the first record is read, the one detected
    /// (a comma before).
    public private(set) var delimiter: CSVDelimiter
    private var machine: CSVStateMachine
    private var chunk: ByteWindow
    private var checkedByteOrderMark = false
    /// The token column name detection prefers, while the delimiter is still to be detected.
    private var detectFor: String?

    /// - Parameter delimiter: nil detects it from the header row, preferring a split with a `tokenColumn` field.
    public init(
        source: any ByteSource,
        maximumRecordLength: Int = CampaignReaderOptions.defaultMaximumRecordLength,
        chunkSize: Int = LineReader.defaultChunkSize,
        delimiter: CSVDelimiter? = .comma,
        tokenColumn: String = "token"
    ) {
        self.delimiter = delimiter ?? .comma
        detectFor = delimiter == nil ? tokenColumn : nil
        machine = CSVStateMachine(maximumRecordLength: max(1, maximumRecordLength), delimiter: self.delimiter.byte)
        chunk = ByteWindow(source: source, capacity: max(4, chunkSize))
    }

    /// Bytes read from the source and not parsed yet: how far behind the source's position the rows handed out
    /// are (for `CampaignReader.readProgress`).
    public var bytesAhead: Int { chunk.unusedCount }

    /// The bytes of field `index` of the current record in `fieldBytes`.
    public func field(_ index: Int) -> Range<Int> {
        let ends = machine.fieldEnds
        return (index == 0 ? 0 : ends[index - 1])..<ends[index]
    }

    /// The text of field `index` of the current record.
    public func fieldText(_ index: Int) -> String {
        String(decoding: machine.fieldBytes[field(index)], as: UTF8.self)
    }

    /// Bytes the reader holds in buffers (the chunk plus the field buffers' capacity), for memory checks.
    public var bufferedCapacity: Int {
        chunk.bytes.count + machine.fieldBytes.capacity + machine.fieldEnds.capacity * MemoryLayout<Int>.stride
    }

    /// The next record, or nil at the end of the input.
    public func next() throws(PipelineError) -> Record? {
        if !checkedByteOrderMark { try skipByteOrderMark() }
        if let tokenColumn = detectFor { try detectDelimiter(tokenColumn: tokenColumn) }
        machine.beginRecord()
        while true {
            if chunk.isEmpty {
                try chunk.refill()
                if chunk.isEmpty { return machine.finishAtEndOfInput() }
            }
            let (next, record) = machine.feed(chunk.bytes, from: chunk.start, to: chunk.end)
            chunk.start = next
            if let record { return record }
        }
    }

    private func skipByteOrderMark() throws(PipelineError) {
        checkedByteOrderMark = true
        while chunk.end - chunk.start < 3, !chunk.atEnd { try chunk.refill() }
        if chunk.bytes[chunk.start..<chunk.end].starts(with: [0xEF, 0xBB, 0xBF]) { chunk.start += 3 }
    }

    /// Reads on until the chunk holds the first line end (or is full, or the input ended), then picks the
    /// delimiter from what it holds of the header row.
    private func detectDelimiter(tokenColumn: String) throws(PipelineError) {
        detectFor = nil
        var scanned = chunk.start
        while !chunk.atEnd, !chunk.bytes[scanned..<chunk.end].contains(UInt8(ascii: "\n")),
            chunk.start > 0 || chunk.end < chunk.bytes.count
        {
            scanned = chunk.end - chunk.start
            try chunk.refill()
        }
        delimiter = CSVDelimiter.detect(in: chunk.bytes, range: chunk.start..<chunk.end, tokenColumn: tokenColumn)
        machine = CSVStateMachine(maximumRecordLength: machine.maximumRecordLength, delimiter: delimiter.byte)
    }
}
