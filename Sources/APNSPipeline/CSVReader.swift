/// Reads RFC 4180 CSV as a streaming state machine over byte chunks: quoted fields with `""` escapes and embedded
/// commas, newlines and CRLF; CRLF or LF record ends; a UTF-8 byte-order mark at the start is skipped.
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
        public enum Problem: Hashable, Sendable {
            /// A quoted field was still open at the end of the input.
            case unterminatedQuote
            /// Something other than a comma or a line end followed a closing quote.
            case textAfterClosingQuote
            /// The record's fields add up to more than `maximumRecordLength` bytes.
            case tooLong
        }

        /// The 1-based physical line where the record starts.
        public let line: Int
        public let fieldCount: Int
        public let problem: Problem?
        /// Whether a line end closed the record (false: the input ended first).
        public let isTerminated: Bool
    }

    private enum State {
        case fieldStart, unquoted, quoted, closingQuote, carriageReturn
    }

    public static let defaultMaximumRecordLength = 64 * 1024

    public let maximumRecordLength: Int
    /// The current record's unescaped field contents, back to back.
    public private(set) var fieldBytes: [UInt8] = []
    private var fieldEnds: [Int] = []
    private let source: any ByteSource
    private var chunk: [UInt8]
    private var position = 0
    private var end = 0
    private var atEnd = false
    private var checkedByteOrderMark = false
    private var physicalLine = 1

    public init(
        source: any ByteSource,
        maximumRecordLength: Int = CSVReader.defaultMaximumRecordLength,
        chunkSize: Int = LineReader.defaultChunkSize
    ) {
        self.source = source
        self.maximumRecordLength = max(1, maximumRecordLength)
        chunk = [UInt8](repeating: 0, count: max(4, chunkSize))
        fieldBytes.reserveCapacity(min(self.maximumRecordLength, 4096))
    }

    /// The bytes of field `index` of the current record in `fieldBytes`.
    public func field(_ index: Int) -> Range<Int> {
        (index == 0 ? 0 : fieldEnds[index - 1])..<fieldEnds[index]
    }

    /// The text of field `index` of the current record.
    public func fieldText(_ index: Int) -> String {
        String(decoding: fieldBytes[field(index)], as: UTF8.self)
    }

    /// Bytes the reader holds in buffers (the chunk plus the field buffer's capacity), for memory checks.
    public var bufferedCapacity: Int { chunk.count + fieldBytes.capacity + fieldEnds.capacity * MemoryLayout<Int>.stride }

    /// The next record, or nil at the end of the input.
    public func next() throws(PipelineError) -> Record? {
        if !checkedByteOrderMark { try skipByteOrderMark() }
        fieldBytes.removeAll(keepingCapacity: true)
        fieldEnds.removeAll(keepingCapacity: true)
        var state = State.fieldStart
        var hasContent = false
        var carriageReturnFollowsQuote = false
        var overflow = false
        var problem: Record.Problem?
        var recordLine = physicalLine

        func append(_ byte: UInt8) {
            if fieldBytes.count + fieldEnds.count < maximumRecordLength { fieldBytes.append(byte) } else { overflow = true }
        }
        func endField() {
            if fieldBytes.count + fieldEnds.count < maximumRecordLength { fieldEnds.append(fieldBytes.count) } else { overflow = true }
        }
        func record(terminated: Bool) -> Record {
            Record(line: recordLine, fieldCount: fieldEnds.count, problem: overflow ? .tooLong : problem, isTerminated: terminated)
        }

        while true {
            if position == end {
                try refill()
                if position == end { break }
            }
            let byte = chunk[position]
            position += 1
            switch state {
            case .fieldStart, .unquoted:
                switch byte {
                case UInt8(ascii: "\"") where state == .fieldStart:
                    state = .quoted
                    hasContent = true
                case UInt8(ascii: ","):
                    endField()
                    state = .fieldStart
                    hasContent = true
                case UInt8(ascii: "\n"):
                    physicalLine += 1
                    guard hasContent else {
                        recordLine = physicalLine  // an empty line: not a record
                        continue
                    }
                    endField()
                    return record(terminated: true)
                case UInt8(ascii: "\r"):
                    state = .carriageReturn
                    carriageReturnFollowsQuote = false
                default:
                    append(byte)
                    state = .unquoted
                    hasContent = true
                }
            case .quoted:
                if byte == UInt8(ascii: "\"") {
                    state = .closingQuote
                } else {
                    if byte == UInt8(ascii: "\n") { physicalLine += 1 }
                    append(byte)
                }
            case .closingQuote:
                switch byte {
                case UInt8(ascii: "\""):
                    append(byte)
                    state = .quoted
                case UInt8(ascii: ","):
                    endField()
                    state = .fieldStart
                case UInt8(ascii: "\n"):
                    physicalLine += 1
                    endField()
                    return record(terminated: true)
                case UInt8(ascii: "\r"):
                    state = .carriageReturn
                    carriageReturnFollowsQuote = true
                default:
                    if problem == nil { problem = .textAfterClosingQuote }
                    append(byte)
                    state = .unquoted
                }
            case .carriageReturn:
                if byte == UInt8(ascii: "\n") {
                    physicalLine += 1
                    guard hasContent else {
                        recordLine = physicalLine
                        state = .fieldStart
                        continue
                    }
                    endField()
                    return record(terminated: true)
                }
                // A lone CR is data; look at this byte again as part of the field.
                if carriageReturnFollowsQuote, problem == nil { problem = .textAfterClosingQuote }
                append(UInt8(ascii: "\r"))
                hasContent = true
                state = .unquoted
                position -= 1
            }
        }
        // The end of the input.
        switch state {
        case .quoted:
            if problem == nil { problem = .unterminatedQuote }
            endField()
            return record(terminated: false)
        case .fieldStart, .carriageReturn:
            guard hasContent else { return nil }
            endField()
            return record(terminated: false)
        case .unquoted, .closingQuote:
            endField()
            return record(terminated: false)
        }
    }

    private func refill() throws(PipelineError) {
        guard !atEnd else { return }
        if position == end {
            position = 0
            end = 0
        }
        let n = try source.read(into: &chunk, at: end, count: chunk.count - end)
        if n == 0 { atEnd = true } else { end += n }
    }

    private func skipByteOrderMark() throws(PipelineError) {
        checkedByteOrderMark = true
        while end - position < 3, !atEnd { try refill() }
        if end - position >= 3, chunk[position] == 0xEF, chunk[position + 1] == 0xBB, chunk[position + 2] == 0xBF {
            position += 3
        }
    }
}
