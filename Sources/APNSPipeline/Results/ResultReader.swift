import APNSCore

/// Reads a result file back (NDJSON or CSV, told apart by its first byte) into `ResultRecord`s, with the replay
/// fields, for `replay`, `prune` and `send --resume`.
///
/// A torn last line (no `\n` at its end, and not a valid line: what a `kill -9` during a write leaves) is
/// skipped and reported in `tornLine`. With `strictLastLine`, a last line without its `\n` is treated as torn
/// even if it parses: that is what `send --resume` needs, because reopening the file cuts such a line off.
/// Any other bad line is a `PipelineError` naming the file and line (`next()`, for `prune` and `send --resume`),
/// or a `DamagedResultLine` that the caller reports and reads on past (`nextLine()`, for `replay`). Unknown
/// NDJSON members and CSV columns are ignored, so newer files stay readable.
///
/// Each record's `file` field becomes a file index into `inputFiles` (paths not yet listed are added), so the
/// records read carry the same `RecordKey` the run that wrote them had when given the same list.
public final class ResultReader {
    /// The file's name, for messages.
    public let name: String
    /// The file's format; nil for an empty file.
    public let format: ResultFormat?
    /// The line number of a torn last line that was skipped.
    public private(set) var tornLine: Int?
    /// The line (for CSV: the physical line where the row starts) of the record `next()` last returned.
    public private(set) var lineNumber = 0
    /// The input paths the records' keys index: the list given, then the paths first seen in the file (a caller
    /// may add its own, such as the result file for lines too damaged to name theirs).
    public var inputFiles: InputFileList
    /// Result lines are longer than campaign lines: an escaped payload, a detail text.
    public static let maximumLineLength = 1 << 20

    private let strictLastLine: Bool
    private let lines: LineReader?
    private let csv: CSVReader?
    private var csvColumns: ResultCSVColumns?

    /// A reader of the result file at `path`; throws when it cannot be opened.
    public convenience init(
        path: String, inputFiles: InputFileList = InputFileList(), strictLastLine: Bool = false
    ) throws(PipelineError) {
        try self.init(
            source: FileByteSource(path: path), name: path, inputFiles: inputFiles, strictLastLine: strictLastLine)
    }

    /// A reader of result lines from `source`.
    public init(
        source: any ByteSource, name: String, inputFiles: InputFileList = InputFileList(), strictLastLine: Bool = false
    ) throws(PipelineError) {
        self.name = name
        self.inputFiles = inputFiles
        self.strictLastLine = strictLastLine
        let replay = ReplayingByteSource(source)
        let first = try replay.firstSignificantByte()
        replay.rewind()
        switch first {
        case nil:
            format = nil
            lines = nil
            csv = nil
        case UInt8(ascii: "{")?:
            format = .ndjson
            lines = LineReader(source: replay, maximumLineLength: Self.maximumLineLength)
            csv = nil
        default:
            format = .csv
            lines = nil
            csv = CSVReader(source: replay, maximumRecordLength: Self.maximumLineLength)
        }
    }

    /// The next result, or nil at the end of the file; a damaged line is an error.
    public func next() throws(PipelineError) -> ResultRecord? {
        switch try nextLine() {
        case .success(let record)?: return record
        case .failure(let damaged)?: throw PipelineError(.resultLineInvalid, damaged.error.detail)
        case nil: return nil
        }
    }

    /// The next line: its record, or why it cannot be read; nil at the end of the file. Throws only when the file
    /// itself cannot be read (or a CSV file's header is unusable).
    public func nextLine() throws(PipelineError) -> Result<ResultRecord, DamagedResultLine>? {
        if let lines { return try nextNDJSON(lines) }
        if let csv { return try nextCSV(csv) }
        return nil
    }

    private func damaged(_ problem: ResultLineProblem, line: Int) -> Result<ResultRecord, DamagedResultLine> {
        lineNumber = line
        return .failure(
            DamagedResultLine(
                resultFile: name, lineNumber: line,
                error: InputError(problem.code, "\(name):\(line): \(problem.message)"),
                record: problem.record))
    }

    /// The record `record` reads from line `line`, or the line as damaged; nil for a torn last line (one without
    /// its line end that cannot be read, as a crash leaves it), which is skipped and noted in `tornLine`.
    private func read(
        line: Int, terminated: Bool, _ record: () throws(ResultLineProblem) -> ResultRecord
    ) -> Result<ResultRecord, DamagedResultLine>? {
        do throws(ResultLineProblem) {
            if strictLastLine, !terminated { throw ResultLineProblem("no line end") }
            let record = try record()
            lineNumber = line
            return .success(record)
        } catch {
            if !terminated {
                tornLine = line
                return nil
            }
            return damaged(error, line: line)
        }
    }

    private func nextNDJSON(_ lines: LineReader) throws(PipelineError) -> Result<ResultRecord, DamagedResultLine>? {
        while let line = try lines.next() {
            var range = line.range
            if line.number == 1 { range = CampaignReader.droppingByteOrderMark(lines.buffer, range) }
            if !line.isTooLong, CampaignReader.isBlank(lines.buffer, range) { continue }
            return read(line: line.number, terminated: line.isTerminated) { () throws(ResultLineProblem) in
                if line.isTooLong {
                    throw ResultLineProblem("longer than \(lines.maximumLineLength) bytes", .recordTooLong)
                }
                return try ResultRecord(ndjson: lines.buffer, range: range, inputFiles: &inputFiles)
            }
        }
        return nil
    }

    private func nextCSV(_ csv: CSVReader) throws(PipelineError) -> Result<ResultRecord, DamagedResultLine>? {
        while let row = try csv.next() {
            guard let columns = csvColumns else {
                // No line of the file can be read without its header: a bad one is the whole file's error.
                do throws(ResultLineProblem) {
                    if let problem = row.problem { throw ResultLineProblem("malformed CSV (\(problem))") }
                    csvColumns = try ResultCSVColumns(header: (0..<row.fieldCount).map { csv.fieldText($0) })
                    continue
                } catch {
                    if !row.isTerminated {
                        tornLine = row.line
                        return nil
                    }
                    throw PipelineError(.resultLineInvalid, "\(name):\(row.line): \(error.message)")
                }
            }
            return read(line: row.line, terminated: row.isTerminated) { () throws(ResultLineProblem) in
                if let problem = row.problem { throw ResultLineProblem("malformed CSV (\(problem))", .csvMalformed) }
                return try columns.record(from: csv, row: row, inputFiles: &inputFiles)
            }
        }
        return nil
    }
}

/// A result line that cannot be read: where it is, why, and the record it names when that much could be read.
public struct DamagedResultLine: Error, Sendable {
    /// The result file, as the reader was told its name.
    public let resultFile: String
    /// The line's number in the result file (for CSV: the physical line where the row starts).
    public let lineNumber: Int
    /// Why, as the input error `replay` reports: the detail starts with `resultFile:lineNumber:`.
    public let error: InputError
    /// The line's key and outcome (and token and topic, when read before the problem), if readable; the key's
    /// file index is the reader's `inputFiles`'.
    public let record: ResultRecord?
}

/// Why one result line cannot be read, as the input error it is, with the record read so far when the line's
/// file, line and outcome were readable.
struct ResultLineProblem: Error {
    let message: String
    let code: InputError.Code
    var record: ResultRecord?

    init(_ message: String, _ code: InputError.Code = .recordFieldInvalid) {
        self.message = message
        self.code = code
    }
}

/// Hands out a source's first bytes again after they were looked at.
final class ReplayingByteSource: ByteSource {
    private let source: any ByteSource
    private var head: [UInt8] = []
    private var headOffset = 0
    private var replaying = false
    /// Bytes read at a time while looking for the first significant byte.
    private static let probeChunkSize = 4096

    init(_ source: any ByteSource) {
        self.source = source
    }

    /// Reads until the first byte that is not a byte-order mark or white space; nil if there is none.
    func firstSignificantByte() throws(PipelineError) -> UInt8? {
        var scratch = [UInt8](repeating: 0, count: Self.probeChunkSize)
        while true {
            var index = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            while index < head.count, JSONText.isSpace(head[index]) { index += 1 }
            if index < head.count, head.count >= 3 || !([0xEF, 0xBB, 0xBF] as [UInt8]).starts(with: head) {
                return head[index]
            }
            let n = try source.read(into: &scratch, at: 0, count: scratch.count)
            if n == 0 { return nil }
            head.append(contentsOf: scratch[0..<n])
        }
    }

    func rewind() {
        replaying = true
        headOffset = 0
    }

    func read(into buffer: inout [UInt8], at offset: Int, count: Int) throws(PipelineError) -> Int {
        if replaying, headOffset < head.count {
            let n = min(count, head.count - headOffset)
            buffer.replaceSubrange(offset..<(offset + n), with: head[headOffset..<(headOffset + n)])
            headOffset += n
            return n
        }
        return try source.read(into: &buffer, at: offset, count: count)
    }
}
