import APNSCore

/// Reads a run's campaign files one after another (only one open at a time) and hands out their records in input
/// order, parsed and validated, keeping only this process's shard.
///
/// Records are numbered by the file's position in `inputs` and their line. Blank lines are not records. An NDJSON
/// file may start with a UTF-8 byte-order mark. Failures of a whole file (it cannot be opened, a read fails, gzip
/// reports corrupt data, a CSV header without a token column) are thrown as `PipelineError`; the records read
/// before stay valid.
///
/// Duplicate detection is not done here: the dispatcher asks a `DuplicateFilter` about each valid record, in
/// input order, so a resumed run rebuilds the same filter while it skips finished records.
public final class CampaignReader: RecordReader {
    public let inputs: [CampaignInput]
    public let options: CampaignReaderOptions
    /// Records returned so far.
    public private(set) var recordsRead = 0
    /// Records read and left to other shards.
    public private(set) var recordsInOtherShards = 0

    private var nextInput = 0
    private var current: Current?
    /// The open file's byte source, for `readProgress`.
    private var currentSource: FileByteSource?
    /// The inputs' sizes; nil unless every input is a regular file named by its path.
    private let inputSizes: [Int64]?

    /// The open file. Classes, so that the parsers' reusable buffers are mutated in place, never copied.
    private enum Current {
        case ndjson(OpenNDJSONFile)
        case csv(OpenCSVFile)
    }

    /// An open NDJSON input: its line reader and its parser.
    private final class OpenNDJSONFile {
        let index: Int
        let lines: LineReader
        var parser: NDJSONRecordParser
        init(index: Int, lines: LineReader, parser: NDJSONRecordParser) {
            self.index = index
            self.lines = lines
            self.parser = parser
        }
    }

    /// An open CSV input: its reader and the parser made from its header.
    private final class OpenCSVFile {
        let index: Int
        let reader: CSVReader
        var parser: CSVRecordParser
        init(index: Int, reader: CSVReader, parser: CSVRecordParser) {
            self.index = index
            self.reader = reader
            self.parser = parser
        }
    }

    public init(inputs: [CampaignInput], options: CampaignReaderOptions) {
        self.inputs = inputs
        self.options = options
        let sizes = inputs.map { $0.path == "-" ? nil : POSIXFile.regularFileSize(atPath: $0.path) }
        inputSizes = sizes.contains(nil) ? nil : sizes.compactMap { $0 }
    }

    /// Bytes read over the inputs' total size (compressed sizes for `.gz` inputs); nil when an input is standard
    /// input or not a regular file.
    public var readProgress: ReadProgress? {
        guard let sizes = inputSizes else { return nil }
        let finished = current == nil ? nextInput : nextInput - 1
        var read = sizes.prefix(max(0, finished)).reduce(0, +)
        if current != nil, sizes.indices.contains(finished) {
            read += min(sizes[finished], max(0, currentSource?.bytesConsumed ?? 0))
        }
        return ReadProgress(bytesRead: read, bytesTotal: sizes.reduce(0, +))
    }

    /// The next record of this shard, or nil when every input is exhausted.
    public func nextRecord() throws(PipelineError) -> CampaignRecord? {
        while true {
            guard let record = try nextRecordOfAnyShard() else { return nil }
            if belongsHere(record) {
                recordsRead += 1
                return record
            }
            recordsInOtherShards += 1
        }
    }

    /// The largest buffer the reader of the current file holds, for memory checks.
    public var currentBufferCapacity: Int {
        switch current {
        case .ndjson(let file): return file.lines.buffer.count
        case .csv(let file): return file.reader.bufferedCapacity
        case nil: return 0
        }
    }

    private func belongsHere(_ record: CampaignRecord) -> Bool {
        let shard = options.shard
        guard shard.count > 1 else { return true }
        if let notification = record.notification { return shard.contains(notification.token) }
        if let text = record.tokenText, let token = try? DeviceToken(parsing: text) { return shard.contains(token) }
        return shard.handlesUnreadableTokens
    }

    @inline(__always)  // the record is built in place of `nextRecord`'s result, not moved through a second return
    private func nextRecordOfAnyShard() throws(PipelineError) -> CampaignRecord? {
        while true {
            switch current {
            case nil:
                guard nextInput < inputs.count else { return nil }
                current = try open(index: nextInput)
                nextInput += 1
            case .ndjson(let file)?:
                guard let line = try file.lines.next() else {
                    current = nil
                    currentSource = nil
                    continue
                }
                if line.isTooLong {
                    let error = InputError(.recordTooLong, "line is longer than \(file.lines.maximumLineLength) bytes")
                    let key = RecordKey(fileIndex: file.index, line: line.number)
                    return CampaignRecord(key: key, content: .invalid(error, tokenText: nil, topicText: nil))
                }
                var range = line.range
                if line.number == 1 { range = Self.droppingByteOrderMark(file.lines.buffer, range) }
                if Self.isBlank(file.lines.buffer, range) { continue }
                let key = RecordKey(fileIndex: file.index, line: line.number)
                return file.parser.parse(file.lines.buffer, range: range, key: key)
            case .csv(let file)?:
                guard let row = try file.reader.next() else {
                    current = nil
                    currentSource = nil
                    continue
                }
                return file.parser.parse(file.reader, record: row, fileIndex: file.index)
            }
        }
    }

    private func open(index: Int) throws(PipelineError) -> Current {
        let input = inputs[index]
        let source = try FileByteSource(path: input.path)
        currentSource = source
        switch input.format {
        case .ndjson:
            let lines = LineReader(source: source, maximumLineLength: options.maximumRecordLength)
            var parser = NDJSONRecordParser(defaults: options.defaults, template: options.template)
            parser.keepsPayloads = options.keepsPayloads
            return .ndjson(OpenNDJSONFile(index: index, lines: lines, parser: parser))
        case .csv:
            let reader = CSVReader(source: source, maximumRecordLength: options.maximumRecordLength)
            guard let header = try reader.next() else {
                throw PipelineError(.csvHeaderInvalid, "\(input.path): the file is empty (no header row)")
            }
            guard header.problem == nil else {
                throw PipelineError(.csvHeaderInvalid, "\(input.path): the header row (line \(header.line)) is malformed")
            }
            let names = (0..<header.fieldCount).map { reader.fieldText($0) }
            do {
                var parser = try CSVRecordParser(
                    header: names, defaults: options.defaults, template: options.template, tokenColumn: options.tokenColumn
                )
                parser.keepsPayloads = options.keepsPayloads
                return .csv(OpenCSVFile(index: index, reader: reader, parser: parser))
            } catch {
                throw PipelineError(error.kind, "\(input.path): \(error.detail)")
            }
        }
    }

    static func droppingByteOrderMark(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        guard range.count >= 3, bytes[range.lowerBound] == 0xEF, bytes[range.lowerBound + 1] == 0xBB,
              bytes[range.lowerBound + 2] == 0xBF
        else { return range }
        return (range.lowerBound + 3)..<range.upperBound
    }

    static func isBlank(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        for index in range where !JSONText.isSpace(bytes[index]) { return false }
        return true
    }
}
