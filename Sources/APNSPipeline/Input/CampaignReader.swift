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
    /// The input files, read in order.
    public let inputs: [CampaignInput]
    /// The options the inputs are read with.
    public let options: CampaignReaderOptions
    /// Records of this shard read so far (returned, or read ahead to be returned next).
    @exclusivity(unchecked)
    public private(set) var recordsRead = 0
    /// Records read and left to other shards.
    @exclusivity(unchecked)
    public private(set) var recordsInOtherShards = 0

    @exclusivity(unchecked)
    private var nextInput = 0
    @exclusivity(unchecked)
    private var current: Current?
    /// The open file's byte source, for `readProgress`.
    @exclusivity(unchecked)
    private var currentSource: FileByteSource?
    /// The inputs' sizes; nil unless every input is a regular file named by its path.
    private let inputSizes: [Int64]?

    /// The open file. Classes, so that the parsers' reusable buffers are mutated in place, never copied.
    private enum Current {
        case ndjson(OpenNDJSONFile)
        case csv(OpenCSVFile)
    }

    /// An open input: its position in the list of inputs, its reader (a `LineReader` for NDJSON, a `CSVReader` for
    /// CSV) and its parser (for CSV, made from its header).
    private final class OpenFile<Reader, Parser> {
        let index: Int
        let reader: Reader
        var parser: Parser
        init(index: Int, reader: Reader, parser: Parser) {
            self.index = index
            self.reader = reader
            self.parser = parser
        }
    }

    private typealias OpenNDJSONFile = OpenFile<LineReader, NDJSONRecordParser>
    private typealias OpenCSVFile = OpenFile<CSVReader, CSVRecordParser>

    /// A reader of `inputs`; nothing is opened until the first record is asked for.
    public init(inputs: [CampaignInput], options: CampaignReaderOptions) {
        self.inputs = inputs
        self.options = options
        let sizes = inputs.map { $0.path == "-" ? nil : POSIXFile.regularFileSize(atPath: $0.path) }
        inputSizes = sizes.contains(nil) ? nil : sizes.compactMap { $0 }
    }

    /// Bytes read over the inputs' total size, with the records of this shard they held: for a plain file, up to
    /// the end of the last record read (what the reader's buffer holds ahead of it is not counted), for a `.gz`
    /// input, the compressed bytes gzip consumed (coarser: gzip and the pipe buffer read ahead). Nil when an input
    /// is standard input or not a regular file. `inputsEnded` once every input has been read to its end: the
    /// records read are then the campaign's total.
    public var readProgress: ReadProgress? {
        guard let sizes = inputSizes else { return nil }
        let finished = current == nil ? nextInput : nextInput - 1
        var read = sizes.prefix(max(0, finished)).reduce(0, +)
        if current != nil, sizes.indices.contains(finished) {
            var consumed = max(0, currentSource?.bytesConsumed ?? 0)
            if currentSource?.isCompressed == false { consumed -= Int64(bytesAheadInCurrentFile) }
            read += min(sizes[finished], max(0, consumed))
        }
        return ReadProgress(
            bytesRead: read, bytesTotal: sizes.reduce(0, +), records: recordsRead,
            inputsEnded: current == nil && nextInput == inputs.count)
    }

    /// Bytes the open file's reader has read past the last record it returned.
    private var bytesAheadInCurrentFile: Int {
        switch current {
        case .ndjson(let file)?: file.reader.bytesAhead
        case .csv(let file)?: file.reader.bytesAhead
        case nil: 0
        }
    }

    /// The first input read as NDJSON whose first line looks like a CSV header, for `requireATopic`'s message.
    @exclusivity(unchecked)
    private var csvLookingInput: String?

    /// Records `prepareToStart` read ahead, handed out first by `nextRecord` (already counted in `recordsRead`).
    @exclusivity(unchecked)
    private var readAhead: [CampaignRecord] = []
    @exclusivity(unchecked)
    private var readAheadNext = 0
    /// How many records `prepareToStart` reads at most while looking for one it can send.
    static let readAheadLimit = 256

    /// The next record of this shard, or nil when every input is exhausted.
    public func nextRecord() throws(PipelineError) -> CampaignRecord? {
        if readAheadNext < readAhead.count { return takeReadAhead() }
        while true {
            guard let record = try nextRecordOfAnyShard() else { return nil }
            if belongsHere(record) {
                recordsRead += 1
                return record
            }
            recordsInOtherShards += 1
        }
    }

    /// Before any file of the run is created: every input is a file (not a directory), every CSV input's header
    /// fits the template and the token column, and the campaign can send something. Reads ahead up to the first
    /// record it can send (at most `readAheadLimit` records of this shard; `nextRecord` and `checkRecords` hand
    /// them out first), and throws when the inputs hold no record at all (`campaignEmpty`) or when no default
    /// topic is set and no record names a topic (`campaignSettingMissing`: no request could ever be sent), whatever
    /// the records before hold (`requireATopic`).
    public func prepareToStart() throws(PipelineError) {
        for (index, input) in inputs.enumerated() where !input.isStream {
            if POSIXFile.isDirectory(atPath: input.path) {
                throw PipelineError(.openFailed, "\(input.path): is a directory, not a campaign file")
            }
            if input.format == .csv, index > 0 {
                _ = try open(index: index)  // its header, checked now; reopened in turn
                currentSource = nil
            }
        }
        var records: [CampaignRecord] = []
        var exhausted = false
        while records.count < Self.readAheadLimit {
            guard let record = try nextRecord() else {
                exhausted = true
                break
            }
            records.append(record)
            if record.notification != nil { break }
        }
        readAhead = records
        readAheadNext = 0
        if exhausted, recordsRead + recordsInOtherShards == 0 {
            let names = inputs.map(\.path).joined(separator: ", ")
            throw PipelineError(
                .campaignEmpty, "\(names): no records to send (an empty campaign is refused, not reported as done)")
        }
        if options.defaults.topic == nil, !records.contains(where: Self.namesATopic) {
            try requireATopic(readAhead: records.count, exhausted: exhausted)
        }
    }

    /// With no default topic and no topic in the records read ahead: every input that is a file is read from its
    /// start (every shard's records, without keeping payloads) up to the first record that names a topic, valid or
    /// not; none found, the campaign is refused. A stream cannot be read twice: what the read-ahead took of it is
    /// all that is known, so a campaign whose files name no topic and whose first `readAheadLimit` records read
    /// name none is refused too (docs/RUNNING-AGAIN.md, "Start-up failures leave nothing behind").
    private func requireATopic(readAhead: Int, exhausted: Bool) throws(PipelineError) {
        let files = inputs.filter { !$0.isStream }
        if !files.isEmpty {
            var scanOptions = options
            scanOptions.shard = .all
            scanOptions.keepsPayloads = false
            let scan = CampaignReader(inputs: files, options: scanOptions)
            while let record = try scan.nextRecord() {
                if Self.namesATopic(record) { return }
            }
        }
        let streams = inputs.filter(\.isStream).map(\.path)
        var fix = "give --topic (or APNS_TOPIC) with the app's bundle id"
        if let csvLookingInput {
            fix +=
                "; and \(csvLookingInput) starts with what looks like a CSV header: give --input-format csv to read it as CSV"
        }
        guard exhausted || streams.isEmpty else {
            throw PipelineError(
                .campaignSettingMissing,
                "no topic: none of the first \(readAhead) records read "
                    + "(\(streams.joined(separator: ", ")) cannot be read twice)\(files.isEmpty ? "" : " nor any record of the files") "
                    + "names a \"topic\", and no default is set; \(fix)")
        }
        throw PipelineError(
            .campaignSettingMissing,
            "no topic: no record of the campaign names a \"topic\" and no "
                + "default is set; \(fix)")
    }

    /// Whether a record names a topic of its own: a valid record (with no default topic, it has one), or an invalid
    /// one whose topic was read.
    private static func namesATopic(_ record: CampaignRecord) -> Bool {
        record.notification != nil || record.topicText != nil
    }

    private func takeReadAhead() -> CampaignRecord {
        let record = readAhead[readAheadNext]
        readAheadNext += 1
        if readAheadNext == readAhead.count {
            readAhead = []
            readAheadNext = 0
        }
        return record
    }

    /// Reads every record left, checked exactly as `nextRecord` reads them but without building valid records'
    /// notifications (for `validate`, which keeps nothing of them), and hands each of this shard's records on in
    /// input order: a valid record's key to `valid`, with its device token as its stored-form hex digits
    /// (`DeviceToken.hex`'s bytes) at `hex` in `bytes`, usually the reader's own buffer, borrowed for the call (no
    /// copy is made), and its topic; an invalid record's key to `invalid`, with what `nextRecord`'s record for it
    /// would hold. Records `prepareToStart` read ahead come first, as `nextRecord` built them.
    public func checkRecords(
        valid: (_ key: RecordKey, _ bytes: [UInt8], _ hex: Range<Int>, _ topic: Topic) throws(PipelineError) -> Void,
        invalid: (_ key: RecordKey, _ error: InputError, _ tokenText: String?, _ topicText: String?)
            throws(PipelineError) -> Void
    ) throws(PipelineError) {
        while readAheadNext < readAhead.count {
            let record = takeReadAhead()
            switch record.content {
            case .notification(let notification):
                let hex = Array(notification.token.hex.utf8)
                try valid(record.key, hex, hex.indices, notification.topic)
            case .invalid(let error, let tokenText, let topicText):
                try invalid(record.key, error, tokenText, topicText)
            }
        }
        while true {
            if current == nil {
                guard nextInput < inputs.count else { return }
                current = try open(index: nextInput)
                nextInput += 1
            }
            switch current {
            case .ndjson(let file)?: try checkLines(of: file, valid: valid, invalid: invalid)
            case .csv(let file)?: try checkRows(of: file, valid: valid, invalid: invalid)
            case nil: break
            }
            current = nil
            currentSource = nil
        }
    }

    /// `checkRecords` over the rest of one NDJSON file: one call for all its lines, so the file, its line reader
    /// and its buffer are not looked up (and reference-counted) again for each line.
    private func checkLines(
        of file: OpenNDJSONFile,
        valid: (_ key: RecordKey, _ bytes: [UInt8], _ hex: Range<Int>, _ topic: Topic) throws(PipelineError) -> Void,
        invalid: (_ key: RecordKey, _ error: InputError, _ tokenText: String?, _ topicText: String?)
            throws(PipelineError) -> Void
    ) throws(PipelineError) {
        let lines = file.reader
        while let line = try lines.next() {
            let key = RecordKey(fileIndex: file.index, line: line.number)
            if line.isTooLong {
                let error = InputError(
                    .recordTooLong,
                    "line is longer than \(lines.maximumLineLength) bytes (--max-record-bytes raises the limit)")
                try take(
                    .invalid(error, tokenText: nil, topicText: nil), key: key, in: [], valid: valid, invalid: invalid)
                continue
            }
            let buffer = lines.buffer  // one reference for the line's checks
            var range = line.range
            if line.number == 1 { range = Self.droppingByteOrderMark(buffer, range) }
            if Self.isBlank(buffer, range) { continue }
            var checked = file.parser.check(buffer, range: range)
            if line.number == 1 { checked = firstLine(checked, of: file, buffer, range) }
            try take(checked, key: key, in: buffer, valid: valid, invalid: invalid)
        }
    }

    /// `checkRecords` over the rest of one CSV file.
    private func checkRows(
        of file: OpenCSVFile,
        valid: (_ key: RecordKey, _ bytes: [UInt8], _ hex: Range<Int>, _ topic: Topic) throws(PipelineError) -> Void,
        invalid: (_ key: RecordKey, _ error: InputError, _ tokenText: String?, _ topicText: String?)
            throws(PipelineError) -> Void
    ) throws(PipelineError) {
        while let row = try file.reader.next() {
            let key = RecordKey(fileIndex: file.index, line: row.line)
            let checked = file.parser.check(file.reader, record: row, fileIndex: file.index)
            try take(checked, key: key, in: [], valid: valid, invalid: invalid)
        }
    }

    /// Hands a checked record of this shard to `valid` or `invalid`; counts another shard's.
    @inline(__always)
    private func take(
        _ line: CheckedLine, key: RecordKey, in bytes: [UInt8],
        valid: (_ key: RecordKey, _ bytes: [UInt8], _ hex: Range<Int>, _ topic: Topic) throws(PipelineError) -> Void,
        invalid: (_ key: RecordKey, _ error: InputError, _ tokenText: String?, _ topicText: String?)
            throws(PipelineError) -> Void
    ) throws(PipelineError) {
        let shard = options.shard
        switch line {
        case .invalid(let error, let tokenText, let topicText):
            guard belongsHere(invalidTokenText: tokenText) else { break }
            recordsRead += 1
            return try invalid(key, error, tokenText, topicText)
        case .valid(.inRecord(let hex), let topic):
            guard shard.count <= 1 || shard.contains(storedForm: bytes[hex]) else { break }
            recordsRead += 1
            return try valid(key, bytes, hex, topic)
        case .valid(.parsed(let token), let topic):
            guard shard.contains(token) else { break }
            recordsRead += 1
            let hex = Array(token.hex.utf8)
            return try valid(key, hex, hex.indices, topic)
        }
        recordsInOtherShards += 1
    }

    /// The largest buffer the reader of the current file holds, for memory checks.
    public var currentBufferCapacity: Int {
        switch current {
        case .ndjson(let file): return file.reader.buffer.count
        case .csv(let file): return file.reader.bufferedCapacity
        case nil: return 0
        }
    }

    private func belongsHere(_ record: CampaignRecord) -> Bool {
        let shard = options.shard
        guard shard.count > 1 else { return true }
        if let notification = record.notification { return shard.contains(notification.token) }
        return belongsHere(invalidTokenText: record.tokenText)
    }

    /// Whether an invalid record with this token text (nil: none) belongs here: with its token's shard when the
    /// token itself is readable, else with shard 0's.
    private func belongsHere(invalidTokenText text: String?) -> Bool {
        let shard = options.shard
        guard shard.count > 1 else { return true }
        if let text, let token = try? DeviceToken(parsing: text) { return shard.contains(token) }
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
                guard let line = try file.reader.next() else {
                    current = nil
                    currentSource = nil
                    continue
                }
                if line.isTooLong {
                    let error = InputError(
                        .recordTooLong,
                        "line is longer than \(file.reader.maximumLineLength) bytes (--max-record-bytes raises the limit)"
                    )
                    let key = RecordKey(fileIndex: file.index, line: line.number)
                    return CampaignRecord(key: key, content: .invalid(error, tokenText: nil, topicText: nil))
                }
                var range = line.range
                if line.number == 1 { range = Self.droppingByteOrderMark(file.reader.buffer, range) }
                if Self.isBlank(file.reader.buffer, range) { continue }
                let key = RecordKey(fileIndex: file.index, line: line.number)
                guard line.number == 1 else { return file.parser.parse(file.reader.buffer, range: range, key: key) }
                let record = file.parser.parse(file.reader.buffer, range: range, key: key)
                return firstLine(record, of: file, file.reader.buffer, range)
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
            parser.keep = options.keep
            return .ndjson(OpenNDJSONFile(index: index, reader: lines, parser: parser))
        case .csv:
            let reader = CSVReader(
                source: source, maximumRecordLength: options.maximumRecordLength, delimiter: options.csvDelimiter,
                tokenColumn: options.tokenColumn)
            guard let header = try reader.next() else {
                throw PipelineError(.csvHeaderInvalid, "\(input.path): the file is empty (no header row)")
            }
            let start = reader.fieldBytes.prefix(2)
            guard !start.elementsEqual([0xFF, 0xFE]), !start.elementsEqual([0xFE, 0xFF]) else {
                throw PipelineError(
                    .csvHeaderInvalid,
                    "\(input.path): the file is UTF-16 text (Excel's \"Unicode Text\"), "
                        + "not UTF-8: save it as \"CSV UTF-8\", or convert it with iconv -f UTF-16 -t UTF-8")
            }
            guard header.problem == nil else {
                throw PipelineError(
                    .csvHeaderInvalid, "\(input.path): the header row (line \(header.line)) is malformed")
            }
            let names = (0..<header.fieldCount).map { reader.fieldText($0) }
            guard CSVRecordParser.tokenColumnIndex(in: names, tokenColumn: options.tokenColumn) != nil else {
                // The first data row, read only to name a column of hex tokens in the message.
                var firstRow: [String]?
                if let row = try? reader.next(), row.problem == nil {
                    firstRow = (0..<row.fieldCount).map { reader.fieldText($0) }
                }
                let error = CSVRecordParser.noTokenColumn(
                    header: names, tokenColumn: options.tokenColumn, firstRow: firstRow, delimiter: reader.delimiter)
                throw PipelineError(error.kind, "\(input.path): \(error.detail)")
            }
            do {
                var parser = try CSVRecordParser(
                    header: names, defaults: options.defaults, template: options.template,
                    tokenColumn: options.tokenColumn,
                    keep: options.keep)
                parser.keepsPayloads = options.keepsPayloads
                return .csv(OpenCSVFile(index: index, reader: reader, parser: parser))
            } catch {
                throw PipelineError(error.kind, "\(input.path): \(error.detail)")
            }
        }
    }

    /// A first NDJSON line's record with `--input-format csv` in its error when the line looks like a CSV header
    /// (`NDJSONRecordParser.csvHinted`); remembers the input for `requireATopic`'s message.
    private func firstLine(_ record: CampaignRecord, of file: OpenNDJSONFile, _ bytes: [UInt8], _ range: Range<Int>)
        -> CampaignRecord
    {
        let hinted = NDJSONRecordParser.firstLine(record, bytes, range: range)
        if hinted.error != record.error { csvLookingInput = inputs[file.index].path }
        return hinted
    }

    /// `firstLine` for `checkRecords`.
    private func firstLine(_ checked: CheckedLine, of file: OpenNDJSONFile, _ bytes: [UInt8], _ range: Range<Int>)
        -> CheckedLine
    {
        let hinted = NDJSONRecordParser.firstLine(checked, bytes, range: range)
        if case .invalid(let before, _, _) = checked, case .invalid(let after, _, _) = hinted, before != after {
            csvLookingInput = inputs[file.index].path
        }
        return hinted
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

// MARK: - CheckedLine

/// What a parser's `check` found in one record, for `CampaignReader.checkRecords`: a valid record's token and
/// topic, or what the parser's `parse` puts in the invalid record (`CampaignRecord.Content.invalid`).
enum CheckedLine {
    case valid(CheckedToken, Topic)
    case invalid(InputError, tokenText: String?, topicText: String?)
}

// MARK: - CheckedToken

/// A valid record's device token as `validate` needs it: either still in the record's own bytes, already in the
/// stored form (`DeviceToken.isStoredForm`: lowercase hex of an accepted length), so checking it made nothing; or
/// parsed into a `DeviceToken` (upper case, grouped, written with escapes).
enum CheckedToken {
    /// The token's stored-form hex digits, at this range of the record's bytes (`RawHeaderFields.bytes`).
    case inRecord(Range<Int>)
    case parsed(DeviceToken)
}
