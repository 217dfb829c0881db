/// The RFC 4180 state machine behind `CSVReader`, without I/O: fed byte ranges, it unescapes one record's fields
/// into its own buffer and says when the record is complete. A plain struct so the byte loop runs on local state
/// (no exclusivity checks per byte) and can be tested on its own.
struct CSVStateMachine {
    /// Where in a record the machine is.
    private enum State {
        case fieldStart, unquoted, quoted, closingQuote, carriageReturn
    }

    let maximumRecordLength: Int
    /// The byte between fields: `,`, `;` or a tab.
    let delimiter: UInt8
    /// The current record's unescaped field contents, back to back.
    private(set) var fieldBytes: [UInt8] = []
    /// Where each field of the current record ends in `fieldBytes`.
    private(set) var fieldEnds: [Int] = []
    /// The 1-based physical line the next byte is on.
    private(set) var physicalLine = 1

    private var state = State.fieldStart
    private var hasContent = false
    private var carriageReturnFollowsQuote = false
    private var overflow = false
    private var problem: CSVReader.Record.Problem?
    private var recordLine = 1

    init(maximumRecordLength: Int, delimiter: UInt8 = UInt8(ascii: ",")) {
        self.maximumRecordLength = maximumRecordLength
        self.delimiter = delimiter
        fieldBytes.reserveCapacity(min(maximumRecordLength, 4096))
    }

    /// Starts a new record (the previous record's fields are dropped).
    mutating func beginRecord() {
        fieldBytes.removeAll(keepingCapacity: true)
        fieldEnds.removeAll(keepingCapacity: true)
        state = .fieldStart
        hasContent = false
        carriageReturnFollowsQuote = false
        overflow = false
        problem = nil
        recordLine = physicalLine
    }

    /// Consumes bytes from `data[start..<end]` until a record ends; returns where it stopped and the record, if
    /// one ended (empty lines are skipped inside).
    mutating func feed(_ data: [UInt8], from start: Int, to end: Int) -> (next: Int, record: CSVReader.Record?) {
        var position = start
        let delimiter = self.delimiter
        while position < end {
            let byte = data[position]
            position += 1
            switch state {
            case .fieldStart, .unquoted:
                switch byte {
                case UInt8(ascii: "\"") where state == .fieldStart:
                    state = .quoted
                    hasContent = true
                case delimiter:
                    endField()
                    state = .fieldStart
                    hasContent = true
                case UInt8(ascii: "\n"):
                    physicalLine += 1
                    guard hasContent else {
                        recordLine = physicalLine  // an empty line: not a record
                        continue
                    }
                    return (position, finishRecord(terminated: true))
                case UInt8(ascii: "\r"):
                    state = .carriageReturn
                    carriageReturnFollowsQuote = false
                default:
                    // This byte and the plain ones after it, up to a delimiter or a line end, copied in one go.
                    let run = position - 1
                    while position < end {
                        let next = data[position]
                        if next == delimiter || next == UInt8(ascii: "\n") || next == UInt8(ascii: "\r") { break }
                        position += 1
                    }
                    append(data, run..<position)
                    state = .unquoted
                    hasContent = true
                }
            case .quoted:
                if byte == UInt8(ascii: "\"") {
                    state = .closingQuote
                } else {
                    // This byte and the ones after it up to a quote (line ends included), copied in one go.
                    let run = position - 1
                    if byte == UInt8(ascii: "\n") { physicalLine += 1 }
                    while position < end {
                        let next = data[position]
                        if next == UInt8(ascii: "\"") { break }
                        if next == UInt8(ascii: "\n") { physicalLine += 1 }
                        position += 1
                    }
                    append(data, run..<position)
                }
            case .closingQuote:
                switch byte {
                case UInt8(ascii: "\""):
                    append(byte)
                    state = .quoted
                case delimiter:
                    endField()
                    state = .fieldStart
                case UInt8(ascii: "\n"):
                    physicalLine += 1
                    return (position, finishRecord(terminated: true))
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
                    return (position, finishRecord(terminated: true))
                }
                // A lone CR is data; look at this byte again as part of the field.
                if carriageReturnFollowsQuote, problem == nil { problem = .textAfterClosingQuote }
                append(UInt8(ascii: "\r"))
                hasContent = true
                state = .unquoted
                position -= 1
            }
        }
        return (position, nil)
    }

    /// The input ended: the record in progress, if there is one.
    mutating func finishAtEndOfInput() -> CSVReader.Record? {
        switch state {
        case .quoted:
            if problem == nil { problem = .unterminatedQuote }
        case .fieldStart, .carriageReturn:
            guard hasContent else { return nil }
        case .unquoted, .closingQuote:
            break
        }
        return finishRecord(terminated: false)
    }

    private mutating func finishRecord(terminated: Bool) -> CSVReader.Record {
        endField()
        return CSVReader.Record(
            line: recordLine, fieldCount: fieldEnds.count, problem: overflow ? .tooLong : problem,
            isTerminated: terminated
        )
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        if fieldBytes.count + fieldEnds.count < maximumRecordLength { fieldBytes.append(byte) } else { overflow = true }
    }

    /// Appends `data[run]` as `append(_:)` would byte by byte: what fits under the record limit, then overflow.
    @inline(__always)
    private mutating func append(_ data: [UInt8], _ run: Range<Int>) {
        let room = maximumRecordLength - fieldBytes.count - fieldEnds.count
        if run.count <= room {
            fieldBytes.append(contentsOf: data[run])
        } else {
            if room > 0 { fieldBytes.append(contentsOf: data[run.lowerBound..<(run.lowerBound + room)]) }
            overflow = true
        }
    }

    @inline(__always)
    private mutating func endField() {
        if fieldBytes.count + fieldEnds.count < maximumRecordLength {
            fieldEnds.append(fieldBytes.count)
        } else {
            overflow = true
        }
    }
}
