import APNSCore

/// Turns CSV records into campaign records, using the header row to find the columns.
///
/// Header names are matched case-insensitively after trimming spaces. Required: the token column (`token`, or the
/// name given). Optional: `topic`, `push_type`, `priority`, `expiration`, `collapse_id`, `apns_id` (headers, each
/// overriding the campaign default; an empty cell uses the default) and `payload` (a JSON object, used as it
/// stands when the cell is not empty). Every column is also a template variable, by its header name as written.
/// The payload is the `payload` cell if there is one, else the template filled with the row's cells.
///
/// A header that cannot work is a `PipelineError` (no token column; a template variable that names no column;
/// neither a template nor a payload column), so a misconfigured file fails before anything is sent.
public struct CSVRecordParser {
    /// The header's column names as written (trimmed).
    public let columns: [String]
    private let tokenColumn: Int
    private let topicColumn: Int?
    private let pushTypeColumn: Int?
    private let priorityColumn: Int?
    private let expirationColumn: Int?
    private let collapseIDColumn: Int?
    private let apnsIDColumn: Int?
    private let payloadColumn: Int?
    private let template: PayloadTemplate?
    /// For each template variable, the column that fills it.
    private let variableColumns: [Int]
    private var headerBuilder: NotificationHeaderBuilder
    private var templateValues: [PayloadTemplate.Value]
    private var rendered: [UInt8] = []
    /// The last payload handed out, reused while records repeat it.
    private var repeatedPayload = RepeatedPayload()
    /// Whether valid records carry their payload's bytes; false leaves them empty (see
    /// `CampaignReaderOptions.keepsPayloads`). Every payload is checked either way.
    public var keepsPayloads = true
    /// The `--keep` fields and the column of each; nil keeps none.
    private let keep: (fields: KeptFields, columns: [Int])?

    /// A parser for records with the given header, defaults and template.
    public init(
        header: [String], defaults: CampaignDefaults, template: PayloadTemplate?, tokenColumn: String = "token",
        keep: KeptFields? = nil
    ) throws(PipelineError) {
        let names = header.map { String(Substring($0).trimmingSpaces()) }
        columns = names
        let lowered = names.map { $0.lowercased() }
        func column(_ name: String) -> Int? { lowered.firstIndex(of: name.lowercased()) }
        guard let token = column(tokenColumn) else {
            throw Self.noTokenColumn(header: header, tokenColumn: tokenColumn, firstRow: nil, delimiter: nil)
        }
        self.tokenColumn = token
        topicColumn = column("topic")
        pushTypeColumn = column("push_type")
        priorityColumn = column("priority")
        expirationColumn = column("expiration")
        collapseIDColumn = column("collapse_id")
        apnsIDColumn = column("apns_id")
        payloadColumn = column("payload")
        guard template != nil || payloadColumn != nil else {
            throw PipelineError(.csvHeaderInvalid, "a CSV campaign needs a payload template or a 'payload' column")
        }
        var variableColumns: [Int] = []
        for name in template?.variableNames ?? [] {
            guard let index = names.firstIndex(of: name) ?? column(name) else {
                throw PipelineError(
                    .csvHeaderInvalid,
                    "the template uses {{\(name)}}, which is not a column of the header (columns: \(names.joined(separator: ", ")))"
                )
            }
            variableColumns.append(index)
        }
        self.keep = try keep.map { fields throws(PipelineError) in (fields, try fields.columns(inHeader: names)) }
        self.template = template
        self.variableColumns = variableColumns
        templateValues = [PayloadTemplate.Value](repeating: .missing, count: variableColumns.count)
        headerBuilder = NotificationHeaderBuilder(defaults: defaults)
    }

    /// The index of the token column in a header (names compared as `init` compares them), or nil.
    static func tokenColumnIndex(in header: [String], tokenColumn: String) -> Int? {
        let wanted = tokenColumn.lowercased()
        return header.firstIndex { String(Substring($0).trimmingSpaces()).lowercased() == wanted }
    }

    /// The error for a header without the token column, naming the columns that look like one: names that contain
    /// `token` (`device_token`, `push_token`), and columns whose cell in `firstRow` (the first data row, when it
    /// was read) is 64 or more hex digits; and the fix, `--token-column NAME`. Names with another `delimiter`
    /// in them say the file was split at the wrong one: the fix is then `--csv-delimiter`.
    static func noTokenColumn(header: [String], tokenColumn: String, firstRow: [String]?, delimiter: CSVDelimiter?)
        -> PipelineError
    {
        let names = header.map { String(Substring($0).trimmingSpaces()) }
        let shown = names.map { "'\($0)'" }.joined(separator: ", ")
        if let delimiter,
            let other = CSVDelimiter.candidates.first(where: { candidate in
                candidate != delimiter && names.contains { $0.utf8.contains(candidate.byte) }
            })
        {
            return PipelineError(
                .csvHeaderInvalid,
                "no '\(tokenColumn)' column in the header split at \(delimiter) "
                    + "(columns: \(shown)); the names hold \(other): give --csv-delimiter \(other)")
        }
        var likely = names.filter { $0.lowercased().contains("token") }
        if let firstRow, firstRow.count == names.count {
            for (name, cell) in zip(names, firstRow) where !likely.contains(name) && isLongHex(cell) {
                likely.append(name)
            }
        }
        let fix =
            switch likely.count {
            case 0: "name the column that holds the device tokens with --token-column NAME"
            case 1: "'\(likely[0])' looks like it: give --token-column \(likely[0])"
            default:
                "these look like it: \(likely.map { "'\($0)'" }.joined(separator: ", ")); give --token-column NAME with the "
                    + "right one"
            }
        return PipelineError(.csvHeaderInvalid, "no '\(tokenColumn)' column in the header (columns: \(shown)); \(fix)")
    }

    /// Whether a cell is 64 or more hex digits (a device token as it is usually stored).
    private static func isLongHex(_ cell: String) -> Bool {
        let trimmed = Substring(cell).trimmingSpaces()
        return trimmed.utf8.count >= 64
            && trimmed.utf8.allSatisfy {
                ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || ($0 | 0x20 >= UInt8(ascii: "a") && $0 | 0x20 <= UInt8(ascii: "f"))
            }
    }

    /// Parses the reader's current record, of the input file at `fileIndex`.
    public mutating func parse(_ reader: CSVReader, record: CSVReader.Record, fileIndex: Int) -> CampaignRecord {
        let key = RecordKey(fileIndex: fileIndex, line: record.line)
        var raw = RawHeaderFields(bytes: reader.fieldBytes)
        let kept = keep.map { $0.fields.values(ofCSV: reader, record: record, columns: $0.columns) }
        do {
            let notification = try parse(reader, record: record, raw: &raw)
            return CampaignRecord(key: key, content: .notification(notification), kept: kept)
        } catch {
            let content = CampaignRecord.Content.invalid(error, tokenText: raw.tokenText, topicText: raw.topicText)
            return CampaignRecord(key: key, content: content, kept: kept)
        }
    }

    /// Checks the reader's current record as `parse` does, for `CampaignReader.checkRecords` (a CSV record's
    /// cells are unescaped into the reader's buffer, so its token is simply parsed).
    mutating func check(_ reader: CSVReader, record: CSVReader.Record, fileIndex: Int) -> CheckedLine {
        switch parse(reader, record: record, fileIndex: fileIndex).content {
        case .notification(let notification): return .valid(.parsed(notification.token), notification.topic)
        case .invalid(let error, let tokenText, let topicText):
            return .invalid(error, tokenText: tokenText, topicText: topicText)
        }
    }

    private mutating func parse(_ reader: CSVReader, record: CSVReader.Record, raw: inout RawHeaderFields)
        throws(InputError) -> PushNotification
    {
        switch record.problem {
        case .tooLong?:
            throw InputError(
                .recordTooLong,
                "record is longer than \(reader.maximumRecordLength) bytes (--max-record-bytes raises the limit)")
        case .unterminatedQuote?:
            throw InputError(.csvMalformed, "a quoted field is not closed before the end of the file")
        case .textAfterClosingQuote?:
            throw InputError(.csvMalformed, "text after a closing quote (write a quote inside a quoted field as \"\")")
        case nil:
            break
        }
        let bytes = reader.fieldBytes
        if let bad = UTF8Validation.firstInvalidByte(bytes, in: 0..<bytes.count) {
            let column = (0..<record.fieldCount).first { reader.field($0).contains(bad) } ?? 0
            throw InputError(
                .recordInvalidUTF8,
                "field '\(column < columns.count ? columns[column] : "\(column + 1)")' is not valid UTF-8")
        }
        guard record.fieldCount == columns.count else {
            if tokenColumn < record.fieldCount { raw.token = reader.field(tokenColumn) }
            throw InputError(.csvColumnCount, "record has \(record.fieldCount) fields, the header has \(columns.count)")
        }
        func cell(_ column: Int?) -> Range<Int>? {
            guard let column else { return nil }
            let range = reader.field(column)
            return range.isEmpty ? nil : range
        }
        raw.token = reader.field(tokenColumn)
        raw.topic = cell(topicColumn)
        raw.pushType = cell(pushTypeColumn)
        raw.priority = cell(priorityColumn)
        raw.expiration = cell(expirationColumn)
        raw.collapseID = cell(collapseIDColumn)
        raw.apnsID = cell(apnsIDColumn)
        let headers = try headerBuilder.headers(from: raw)

        if let payloadColumn, !reader.field(payloadColumn).isEmpty {
            try PayloadRules.validate(
                JSONScanner(bytes), range: reader.field(payloadColumn), pushType: headers.pushType,
                priority: headers.priority
            )
            let kept = keepsPayloads ? repeatedPayload.array(of: bytes, range: reader.field(payloadColumn)) : []
            return headers.notification(payload: kept)
        }
        guard let template else {
            throw InputError(.payloadMissing, "the 'payload' cell is empty and no template is given")
        }
        for (variable, column) in variableColumns.enumerated() {
            templateValues[variable] = .text(reader.field(column))
        }
        try template.render(into: &rendered, values: templateValues, in: bytes)
        try NDJSONRecordParser.validateRendered(rendered, pushType: headers.pushType, priority: headers.priority)
        return headers.notification(payload: keepsPayloads ? repeatedPayload.array(of: rendered) : [])
    }
}
