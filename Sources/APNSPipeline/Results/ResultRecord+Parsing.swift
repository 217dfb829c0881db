import APNSCore

extension ResultRecord {
    /// Reads one NDJSON result line, `bytes[range]`; its `file` becomes an index into `inputFiles`.
    init(ndjson bytes: [UInt8], range: Range<Int>, inputFiles: inout InputFileList) throws(ResultLineProblem) {
        let scanner = JSONScanner(bytes)
        let object: JSONScanner.Value
        do {
            object = try scanner.scanDocument(in: range)
        } catch {
            throw ResultLineProblem(
                "not valid JSON: \(error.message) at column \(error.offset - range.lowerBound + 1)", .recordInvalidJSON
            )
        }
        guard object.kind == .object else { throw ResultLineProblem("not a JSON object", .recordNotObject) }
        var fields = ResultFieldValues()
        scanner.forEachMember(of: object) { key, value in
            guard value.kind != .null else { return }
            guard let field = ResultFieldValues.index(ofKey: key, in: scanner) else { return }  // unknown: ignored
            switch value.kind {
            case .string where value.hasEscapes:
                // An escaped lone surrogate names no character: the field is damaged, not silently U+FFFD.
                fields.values[field] = scanner.decodeStringExactly(value).map { .text(Array($0.utf8)) } ?? .invalid(
                    "holds an escaped lone surrogate (\\uD800 to \\uDFFF), which is no character",
                    ResultFieldValues.errorCode(of: ResultRecord.fieldNames[field]))
            case .string:
                fields.values[field] = .text(Array(bytes[(value.range.lowerBound + 1)..<(value.range.upperBound - 1)]))
            case .number:
                fields.values[field] = .number(Array(bytes[value.range]))
            case .object where field == ResultFieldValues.payloadIndex:
                // Raw line breaks (a line not written by us) read as the writer writes them: as spaces.
                fields.values[field] = .text(ResultRecord.oneLine(Array(bytes[value.range])))
            default:
                fields.values[field] = .invalid("has the wrong type", .recordFieldInvalid)
            }
        }
        try self.init(fields, inputFiles: &inputFiles)
    }

    /// Builds a record from field values read from NDJSON or CSV. A problem found after the line's file, line and
    /// outcome were read carries the record read so far, so `replay` can report it under that file and line.
    fileprivate init(_ fields: ResultFieldValues, inputFiles: inout InputFileList) throws(ResultLineProblem) {
        guard let file = try fields.text("file") else { throw ResultLineProblem("no 'file'") }
        guard let line = try fields.integer("line"), line >= 1 else { throw ResultLineProblem("no valid 'line'") }
        guard let outcomeText = try fields.text("outcome") else { throw ResultLineProblem("no 'outcome'") }
        guard let outcome = RecordOutcome(rawValue: outcomeText) else {
            throw ResultLineProblem("unknown outcome '\(outcomeText)'")
        }
        let key = RecordKey(fileIndex: inputFiles.index(adding: file), line: Int(line))
        var record = ResultRecord(key: key, outcome: outcome)
        do {
            try record.readFields(fields)
        } catch {
            var problem = error
            problem.record = record
            throw problem
        }
        self = record
    }

    private mutating func readFields(_ fields: ResultFieldValues) throws(ResultLineProblem) {
        token = try fields.text("token")
        topic = try fields.text("topic")
        status = try fields.integer("status").map { Int($0) }
        reason = try fields.text("reason")
        detail = try fields.text("detail")
        apnsID = try fields.text("apns_id")
        timestamp = try fields.integer("timestamp")
        attempts = try fields.integer("attempts").map { Int($0) } ?? 0
        if let text = try fields.text("push_type") {
            guard let type = PushType(rawValue: text) else {
                throw ResultLineProblem("unknown push_type '\(text)'", .pushTypeUnknown)
            }
            pushType = type
        }
        if let number = try fields.integer("priority") {
            guard let value = Priority(rawValue: Int(number)) else {
                throw ResultLineProblem("invalid priority \(number)", .priorityInvalid)
            }
            priority = value
        }
        expiration = try fields.integer("expiration")
        collapseID = try fields.text("collapse_id")
        payload = try fields.bytes("payload")
    }
}

/// The raw values of one result line's known fields, by `ResultRecord.fieldNames` position.
struct ResultFieldValues {
    /// A field as read: text (a JSON string or object, a CSV cell), a JSON number, or a value that cannot be
    /// used (why, and the input error it is), reported when the field is read.
    enum Value {
        case text([UInt8])
        case number([UInt8])
        case invalid(String, InputError.Code)
    }

    var values = [Value?](repeating: nil, count: ResultRecord.fieldNames.count)

    private static let indexByName: [String: Int] = Dictionary(
        uniqueKeysWithValues: ResultRecord.fieldNames.enumerated().map { ($0.element, $0.offset) }
    )

    private static let nameBytes: [[UInt8]] = ResultRecord.fieldNames.map { Array($0.utf8) }
    static let payloadIndex = ResultRecord.fieldNames.count - 1

    static func index(of name: String) -> Int? { indexByName[name] }

    /// The field a JSON key names, compared on its bytes (no string is made unless the key has escapes).
    static func index(ofKey key: JSONScanner.Value, in scanner: JSONScanner) -> Int? {
        if key.hasEscapes { return indexByName[scanner.decodeString(key)] }
        let content = (key.range.lowerBound + 1)..<(key.range.upperBound - 1)
        for (index, name) in nameBytes.enumerated() where name.count == content.count {
            if name.elementsEqual(scanner.bytes[content]) { return index }
        }
        return nil
    }

    /// The input error a bad value of the field is, as `send` names it for a campaign record.
    static func errorCode(of name: String) -> InputError.Code {
        switch name {
        case "push_type": return .pushTypeUnknown
        case "priority": return .priorityInvalid
        case "expiration": return .expirationInvalid
        case "collapse_id": return .collapseIDInvalid
        case "apns_id": return .apnsIDInvalid
        default: return .recordFieldInvalid
        }
    }

    private func value(_ name: String) -> Value? {
        guard let index = Self.indexByName[name] else { return nil }
        return values[index]
    }

    func text(_ name: String) throws(ResultLineProblem) -> String? {
        switch value(name) {
        case .text(let bytes)?: return String(decoding: bytes, as: UTF8.self)
        case .number?: throw ResultLineProblem("field '\(name)' must be a string", .recordFieldInvalid)
        case .invalid(let why, let code)?: throw ResultLineProblem("field '\(name)' \(why)", code)
        case nil: return nil
        }
    }

    func bytes(_ name: String) throws(ResultLineProblem) -> [UInt8]? {
        switch value(name) {
        case .text(let bytes)?, .number(let bytes)?: return bytes
        case .invalid(let why, let code)?: throw ResultLineProblem("field '\(name)' \(why)", code)
        case nil: return nil
        }
    }

    /// An integer field (in CSV every cell is text, so digits in text count too).
    func integer(_ name: String) throws(ResultLineProblem) -> Int64? {
        guard let bytes = try bytes(name) else { return nil }
        var digits = bytes[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 18,
              digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { throw ResultLineProblem("field '\(name)' must be an integer", Self.errorCode(of: name)) }
        let magnitude = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
        return negative ? -magnitude : magnitude
    }
}

/// Maps a CSV result file's header to the known fields.
struct ResultCSVColumns {
    /// The known field each column holds (by `ResultRecord.fieldNames` position), nil for unknown columns.
    private let fieldByColumn: [Int?]

    init(header: [String]) throws(ResultLineProblem) {
        fieldByColumn = header.map { ResultFieldValues.index(of: $0.trimmingCharactersInSpaces()) }
        for required in ["file", "line", "outcome"] where !fieldByColumn.contains(ResultFieldValues.index(of: required)) {
            throw ResultLineProblem("the CSV header has no '\(required)' column")
        }
    }

    func record(
        from csv: CSVReader, row: CSVReader.Record, inputFiles: inout InputFileList
    ) throws(ResultLineProblem) -> ResultRecord {
        guard row.fieldCount == fieldByColumn.count else {
            throw ResultLineProblem("\(row.fieldCount) fields, the header has \(fieldByColumn.count)", .csvColumnCount)
        }
        var fields = ResultFieldValues()
        for (column, field) in fieldByColumn.enumerated() {
            guard let field else { continue }
            let range = csv.field(column)
            guard !range.isEmpty else { continue }
            // A cell that is not UTF-8 is damaged: read as text it would come back changed (U+FFFD) when written.
            let cell = Array(csv.fieldBytes[range])
            fields.values[field] = UTF8Validation.firstInvalidByte(cell, in: 0..<cell.count) == nil
                ? .text(cell) : .invalid("is not valid UTF-8", .recordInvalidUTF8)
        }
        return try ResultRecord(fields, inputFiles: &inputFiles)
    }
}

extension String {
    func trimmingCharactersInSpaces() -> String { String(Substring(self).trimmingSpaces()) }
}
