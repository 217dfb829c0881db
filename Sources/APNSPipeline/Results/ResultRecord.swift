import APNSCore

/// One record's final result, from the dispatcher (or `validate`) to the result file and back (`replay`,
/// `prune`, `report`, `send --resume`): one line of a result file.
///
/// Fields, in the order they are written (NDJSON omits absent ones; CSV leaves them empty):
/// `file`, `line`, `token`, `topic`, `outcome`, `status`, `reason`, `detail`, `apns_id`, `apns_unique_id`,
/// `timestamp`, `attempts`,
/// then what `replay` needs to send the record again: `push_type`, `priority`, `expiration`, `collapse_id`,
/// `payload` (the payload bytes as sent; in NDJSON embedded as raw JSON, in CSV as a quoted cell). The record
/// carries its `RecordKey`; only `ResultWriter` turns the key's file index into the `file` path (and
/// `ResultReader` turns it back), through the run's `InputFileList`.
public struct ResultRecord: Sendable, Hashable {
    /// The input record: file index and 1-based line.
    public var key: RecordKey
    /// The token as sent (lowercase hex), or as written for an invalid record.
    public var token: String?
    /// The notification's topic; nil when the record had none.
    public var topic: String?
    /// How the record ended.
    public var outcome: RecordOutcome
    /// The HTTP status of the last answer.
    public var status: Int?
    /// The APNs reason, or the `InputError` code of an invalid record.
    public var reason: String?
    /// Human text: the input error, the transport failure, why the campaign stopped.
    public var detail: String?
    /// The `apns-id` APNs answered with; nil when there was no answer.
    public var apnsID: String?
    /// The `apns-unique-id` of a 200 answer (the development environment sends one), for Apple's delivery log.
    public var apnsUniqueID: String?
    /// For 410 answers: milliseconds since the epoch at which APNs last saw the token invalid.
    public var timestamp: Int64?
    /// Requests that reached the wire for this record.
    public var attempts: Int
    /// The push type sent; nil when the record was not valid.
    public var pushType: PushType?
    /// The priority sent; nil when none was.
    public var priority: Priority?
    /// Epoch seconds (a relative expiration resolved at the first send), or the duration of a record never sent
    /// (`ExpirationSetting`): `replay` sends the first value again, or counts the duration from its own send.
    public var expiration: ExpirationSetting?
    /// The collapse id sent; nil when none was.
    public var collapseID: String?
    /// The payload bytes exactly as sent.
    public var payload: [UInt8]?
    /// The record's `--keep` values (`KeptFields`): in NDJSON the line's last member, `kept`, an object of
    /// strings; in CSV the columns after `payload`, one per kept field. Nil when the run keeps none.
    public var kept: KeptValues? = nil

    /// The field names, in the order they are written (the CSV header).
    public static let fieldNames = [
        "file", "line", "token", "topic", "outcome", "status", "reason", "detail", "apns_id", "apns_unique_id",
        "timestamp", "attempts",
        "push_type", "priority", "expiration", "collapse_id", "payload",
    ]
}

extension ResultRecord {
    /// The one constructor of a record's result, for `send`, `replay` and `validate` alike. When `notification`
    /// is given and the outcome is one `replay` sends again (`RecordOutcome.isReplayable`), the line also
    /// carries the replay fields, so the result file alone is enough to send the record again, and the apns-id
    /// the notification was sent with when no answer gave one; every other line stays short. The token and topic
    /// default to the notification's.
    ///
    /// In an extension, so the struct keeps its implicit memberwise initializer, which this one calls with every
    /// field at once: assigning the fields one by one here made the compiler copy the finished record and release
    /// the original (a dozen reference-count operations a result).
    public init(
        key: RecordKey, outcome: RecordOutcome, token: String? = nil, topic: String? = nil, status: Int? = nil,
        reason: String? = nil, detail: String? = nil, apnsID: String? = nil, apnsUniqueID: String? = nil,
        timestamp: Int64? = nil, attempts: Int = 0, notification: PushNotification? = nil
    ) {
        let replayed = Self.carriesNotification(outcome, status: status) ? notification : nil
        self.init(
            key: key, token: token ?? notification?.token.hex, topic: topic ?? notification?.topic.value,
            outcome: outcome, status: status, reason: reason, detail: detail,
            apnsID: apnsID ?? replayed?.apnsID?.description, apnsUniqueID: apnsUniqueID, timestamp: timestamp,
            attempts: attempts,
            pushType: replayed?.pushType, priority: replayed?.priority, expiration: replayed?.expiration,
            collapseID: replayed?.collapseID?.value, payload: replayed?.payload)
    }

    /// Whether APNs refused the record as a bad request: an `input_error` that reached the wire (the others were
    /// invalid in the file and never sent). The live progress and the report count these as "rejected".
    public var isRejectedByAPNs: Bool { outcome == .inputError && attempts > 0 }

    /// Whether a line carries its notification's headers and payload: every line `replay` sends by default
    /// (retryable, not sent, in doubt), expired ones (`replay --not-after` sends them), and requests APNs rejected (`input_error` with a status), which
    /// `replay --topic` or `--push-type` sends again when the rejection was the campaign's setting's fault.
    public static func carriesNotification(_ outcome: RecordOutcome, status: Int?) -> Bool {
        outcome.isReplayable || outcome == .expired || (outcome == .inputError && status != nil)
    }

    /// The notification to send again (`replay`), rebuilt from the line alone and validated like a campaign
    /// record. The apns-id is reused when the line has one, so a replayed push keeps its identity; one that is not
    /// a UUID is an input error, never silently replaced.
    public func replayNotification() throws(InputError) -> PushNotification {
        guard let token else { throw InputError(.tokenMissing, "result line has no token") }
        guard let topic else { throw InputError(.topicMissing, "result line has no topic") }
        guard let payload else {
            throw InputError(
                .payloadMissing, "result line has no payload (only lines of records not delivered carry one)")
        }
        let notification = PushNotification(
            token: try DeviceToken(parsing: token),
            topic: try Topic(validating: topic),
            pushType: pushType ?? .alert,
            priority: priority,
            expiration: expiration,
            collapseID: try collapseID.map { value throws(InputError) in try CollapseID(validating: value) },
            apnsID: try apnsID.map { value throws(InputError) in try APNSID(parsing: value) },
            payload: payload
        )
        try notification.validate()
        return notification
    }
}

// MARK: - Parsing

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
        var keptMember: JSONScanner.Value?
        scanner.forEachMember(of: object) { key, value in
            guard value.kind != .null else { return }
            guard let field = ResultFieldValues.index(ofKey: key, in: scanner) else {
                if value.kind == .object, scanner.decodeString(key) == "kept" { keptMember = value }
                return  // other unknown members: ignored
            }
            switch value.kind {
            case .string where value.hasEscapes:
                // An escaped lone surrogate names no character: the field is damaged, not silently U+FFFD.
                fields.values[field] =
                    scanner.decodeStringExactly(value).map { .text(Array($0.utf8)) }
                    ?? .invalid(
                        "holds an escaped lone surrogate (\\uD800 to \\uDFFF), which is no character",
                        ResultFieldValues.errorCode(of: ResultRecord.fieldNames[field]))
            case .string:
                fields.values[field] = .text(Array(bytes[(value.range.lowerBound + 1)..<(value.range.upperBound - 1)]))
            case .number:
                fields.values[field] = .number(Array(bytes[value.range]))
            case .object where field == ResultFieldValues.payloadIndex:
                fields.values[field] = .object(Array(bytes[value.range]))
            default:
                fields.values[field] = .invalid("has the wrong type", .recordFieldInvalid)
            }
        }
        try self.init(fields, inputFiles: &inputFiles)
        if let keptMember { kept = KeptValues.read(member: keptMember, in: scanner) }
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
        apnsUniqueID = try fields.text("apns_unique_id")
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
        if let bytes = try fields.bytes("expiration") {
            do {
                expiration = try ExpirationSetting(parsing: String(decoding: bytes, as: UTF8.self))
            } catch {
                throw ResultLineProblem("field 'expiration': \(error.detail)", .expirationInvalid)
            }
        }
        collapseID = try fields.text("collapse_id")
        payload = try fields.payload()
    }
}

/// The raw values of one result line's known fields, by `ResultRecord.fieldNames` position.
struct ResultFieldValues {
    /// A field as read: text (a JSON string, a CSV cell), a JSON number, a JSON object (the payload's), or a value
    /// that cannot be used (why, and the input error it is), reported when the field is read.
    enum Value {
        case text([UInt8])
        case number([UInt8])
        case object([UInt8])
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
        case .number?, .object?: throw ResultLineProblem("field '\(name)' must be a string", .recordFieldInvalid)
        case .invalid(let why, let code)?: throw ResultLineProblem("field '\(name)' \(why)", code)
        case nil: return nil
        }
    }

    func bytes(_ name: String) throws(ResultLineProblem) -> [UInt8]? {
        switch value(name) {
        case .text(let bytes)?, .number(let bytes)?: return bytes
        case .object?: throw ResultLineProblem("field '\(name)' has the wrong type", .recordFieldInvalid)
        case .invalid(let why, let code)?: throw ResultLineProblem("field '\(name)' \(why)", code)
        case nil: return nil
        }
    }

    /// The payload: an object as `ResultRecord.lineObject(_:)` has it, whether a JSON object or text holding one
    /// (a line written elsewhere, a CSV cell); any other text as it is.
    func payload() throws(ResultLineProblem) -> [UInt8]? {
        switch values[Self.payloadIndex] {
        case .object(let bytes)?: return ResultRecord.oneLine(bytes)
        case .text(let bytes)?, .number(let bytes)?: return ResultRecord.lineObject(bytes) ?? bytes
        case .invalid(let why, let code)?: throw ResultLineProblem("field 'payload' \(why)", code)
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
    /// The columns that are not known fields and can be kept fields' names (`KeptFields.problem(with:)`): a
    /// `--keep` run's kept values, after `payload`.
    private let keptColumns: [(name: String, column: Int)]

    init(header: [String]) throws(ResultLineProblem) {
        fieldByColumn = header.map { ResultFieldValues.index(of: $0.trimmingCharactersInSpaces()) }
        var kept: [(name: String, column: Int)] = []
        for (column, cell) in header.enumerated() where fieldByColumn[column] == nil {
            let name = cell.trimmingCharactersInSpaces()
            if KeptFields.problem(with: name) == nil, !kept.contains(where: { $0.name == name }) {
                kept.append((name, column))
            }
        }
        keptColumns = kept
        for required in ["file", "line", "outcome"] where !fieldByColumn.contains(ResultFieldValues.index(of: required))
        {
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
            fields.values[field] =
                UTF8Validation.firstInvalidByte(cell, in: 0..<cell.count) == nil
                ? .text(cell) : .invalid("is not valid UTF-8", .recordInvalidUTF8)
        }
        var record = try ResultRecord(fields, inputFiles: &inputFiles)
        if !keptColumns.isEmpty {
            record.kept = KeptValues(
                names: keptColumns.map(\.name),
                values: keptColumns.map { String(decoding: csv.fieldBytes[csv.field($0.column)], as: UTF8.self) })
        }
        return record
    }
}

extension String {
    func trimmingCharactersInSpaces() -> String { String(Substring(self).trimmingSpaces()) }
}

// MARK: - Serialization

/// How result lines are written: hand-made into a reusable byte buffer, no `JSONEncoder`.
extension ResultRecord {
    /// Appends the record as one NDJSON line (with its `\n`); absent fields are left out. `file` is the path
    /// of the key's input file (the writer's to resolve).
    func appendNDJSON(file: String, to out: inout [UInt8]) {
        appendNDJSON(opening: Self.ndjsonOpening(file: file), to: &out)
    }

    /// The start every NDJSON line of one input file shares, `{"file":"<path>","line":`: a writer makes it once
    /// per file and passes it to `appendNDJSON(opening:to:)`.
    static func ndjsonOpening(file: String) -> [UInt8] {
        var opening: [UInt8] = []
        append(#"{"file":"#, to: &opening)
        JSONText.appendString(file, to: &opening)
        append(#","line":"#, to: &opening)
        return opening
    }

    /// The same line, after an `opening` from `ndjsonOpening(file:)` for the key's file.
    func appendNDJSON(opening: [UInt8], to out: inout [UInt8]) {
        var middle = DeliveryLineMiddle()
        appendNDJSON(opening: opening, deliveryMiddle: &middle, to: &out)
    }

    /// The same line, with a plain delivery's middle (its topic to its status) from `deliveryMiddle`, which a writer
    /// keeps from line to line.
    func appendNDJSON(opening: [UInt8], deliveryMiddle: inout DeliveryLineMiddle, to out: inout [UInt8]) {
        out.append(contentsOf: opening)
        DecimalText.append(key.line, to: &out)
        if let token, let topic, isPlainDelivery, kept == nil {
            // The commonest line: the same bytes as below, each string's closing quote in the literal after it.
            Self.append(#","token":""#, to: &out)
            JSONText.appendStringContents(token, to: &out)
            deliveryMiddle.update(for: topic)
            out.append(contentsOf: deliveryMiddle.bytes)
            if let apnsID {
                Self.append(#","apns_id":""#, to: &out)
                JSONText.appendStringContents(apnsID, to: &out)
                if let apnsUniqueID {
                    Self.append(#"","apns_unique_id":""#, to: &out)
                    JSONText.appendStringContents(apnsUniqueID, to: &out)
                }
                Self.append("\",\"attempts\":1}\n", to: &out)
            } else {
                Self.append(",\"attempts\":1}\n", to: &out)
            }
            return
        }
        if let token { Self.appendMember(#","token":""#, token, to: &out) }
        if let topic { Self.appendMember(#","topic":""#, topic, to: &out) }
        // Other deliveries with 200 (more attempts, an apns-id without a topic, the replay fields) still take their
        // outcome and status from one literal, and lines in one attempt with nothing after take their end from one.
        if outcome == .delivered, status == 200 {
            Self.append(Self.deliveredWith200, to: &out)
        } else {
            Self.append(outcome.ndjsonMember, to: &out)
            if let status { Self.appendMember(#","status":"#, status, to: &out) }
        }
        if let reason { Self.appendMember(#","reason":""#, reason, to: &out) }
        if let detail { Self.appendMember(#","detail":""#, detail, to: &out) }
        if let apnsID { Self.appendMember(#","apns_id":""#, apnsID, to: &out) }
        if let apnsUniqueID { Self.appendMember(#","apns_unique_id":""#, apnsUniqueID, to: &out) }
        if let timestamp { Self.appendMember(#","timestamp":"#, timestamp, to: &out) }
        if attempts == 1, pushType == nil, priority == nil, expiration == nil, collapseID == nil, payload == nil,
            kept == nil
        {
            Self.append(",\"attempts\":1}\n", to: &out)
            return
        }
        Self.appendMember(#","attempts":"#, attempts, to: &out)
        if let pushType { Self.appendMember(#","push_type":""#, pushType.rawValue, to: &out) }
        if let priority { Self.appendMember(#","priority":"#, priority.rawValue, to: &out) }
        if let expiration {
            if let epoch = expiration.epochSeconds {
                Self.appendMember(#","expiration":"#, epoch, to: &out)
            } else {
                Self.appendMember(#","expiration":""#, expiration.description, to: &out)
            }
        }
        if let collapseID { Self.appendMember(#","collapse_id":""#, collapseID, to: &out) }
        if let payload {
            Self.append(#","payload":"#, to: &out)
            Self.appendPayload(payload, to: &out)
        }
        kept?.appendNDJSONMember(to: &out)
        Self.append("}\n", to: &out)
    }

    /// Appends the CSV header row: `fieldNames`, then the kept fields' names.
    static func appendCSVHeader(keptNames: [String] = [], to out: inout [UInt8]) {
        out.append(contentsOf: (fieldNames + keptNames).joined(separator: ",").utf8)
        out.append(UInt8(ascii: "\n"))
    }

    /// Appends the record as one CSV row (with its `\n`), in `fieldNames` order, then its value of each of
    /// `keptNames` (empty when it has none), each a user cell (`CSVText.appendUserCell`); `file` as for NDJSON.
    /// `uniqueIDColumn: false` leaves the `apns_unique_id` cell out, for a file whose header has no such column.
    func appendCSV(file: String, keptNames: [String] = [], uniqueIDColumn: Bool = true, to out: inout [UInt8]) {
        CSVText.appendCell(file, to: &out)
        out.append(UInt8(ascii: ","))
        DecimalText.append(key.line, to: &out)
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(token, to: &out)
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(topic, to: &out)
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: outcome.rawValue.utf8)
        out.append(UInt8(ascii: ","))
        if let status { DecimalText.append(status, to: &out) }
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(reason, to: &out)
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(detail, to: &out)
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(apnsID, to: &out)
        out.append(UInt8(ascii: ","))
        if uniqueIDColumn {
            CSVText.appendCell(apnsUniqueID, to: &out)
            out.append(UInt8(ascii: ","))
        }
        if let timestamp { DecimalText.append(timestamp, to: &out) }
        out.append(UInt8(ascii: ","))
        DecimalText.append(attempts, to: &out)
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(pushType?.rawValue, to: &out)
        out.append(UInt8(ascii: ","))
        if let priority { DecimalText.append(priority.rawValue, to: &out) }
        out.append(UInt8(ascii: ","))
        if let expiration {
            if let epoch = expiration.epochSeconds {
                DecimalText.append(epoch, to: &out)
            } else {
                out.append(contentsOf: expiration.description.utf8)  // a duration: digits and d, h, m, s
            }
        }
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(collapseID, to: &out)
        out.append(UInt8(ascii: ","))
        if let payload { CSVText.appendQuotedCell(payload, to: &out) }
        for name in keptNames {
            out.append(UInt8(ascii: ","))
            CSVText.appendUserCell(kept?.value(named: name) ?? "", to: &out)
        }
        out.append(UInt8(ascii: "\n"))
    }

    /// Delivered with 200 in one attempt, with nothing to say but its apns-id: the line `appendNDJSON` writes in
    /// the fewest appends.
    private var isPlainDelivery: Bool {
        outcome == .delivered && status == 200 && reason == nil && detail == nil && timestamp == nil && attempts == 1
            && pushType == nil && priority == nil && expiration == nil && collapseID == nil && payload == nil
            && (apnsUniqueID == nil || apnsID != nil)
    }

    /// The outcome and status members of a delivery answered 200, as one literal.
    static let deliveredWith200: StaticString = #","outcome":"delivered","status":200"#

    /// A literal's bytes, in one append (a `String` literal's `utf8` took the collection-generic path).
    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        literal.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// `key` is the member's whole lead-in with the string's opening quote, `,"name":"`, so it goes in with one
    /// append.
    private static func appendMember(_ key: StaticString, _ value: String, to out: inout [UInt8]) {
        append(key, to: &out)
        JSONText.appendStringContents(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    private static func appendMember<T: BinaryInteger>(_ key: StaticString, _ value: T, to out: inout [UInt8]) {
        append(key, to: &out)
        DecimalText.append(value, to: &out)
    }

    /// A payload that is a JSON object goes in as the object (`lineObject`); anything else goes in as a JSON string.
    private static func appendPayload(_ payload: [UInt8], to out: inout [UInt8]) {
        guard let object = lineObject(payload) else {
            out.append(UInt8(ascii: "\""))
            JSONText.appendEscaped(payload, 0..<payload.count, to: &out)
            out.append(UInt8(ascii: "\""))
            return
        }
        out.append(contentsOf: object)
    }

    /// The rule of a payload that is a JSON object, for the writer and the reader alike: a result line holds the
    /// object alone (no white space around it) with its line breaks (JSON white space there, since strings cannot
    /// hold them raw) as spaces, so the line stays whole and a line read and written again reads back the same.
    /// Nil when `payload` is not a JSON object.
    static func lineObject(_ payload: [UInt8]) -> [UInt8]? {
        guard payload.first(where: { !JSONText.isSpace($0) }) == UInt8(ascii: "{"),
            let object = try? JSONScanner(payload).scanDocument(in: 0..<payload.count), object.kind == .object
        else { return nil }
        return oneLine(object.range == payload.indices ? payload : Array(payload[object.range]))
    }

    /// The bytes with their line breaks as spaces; the same array when there is none.
    static func oneLine(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { return bytes }
        return bytes.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
    }
}

extension RecordOutcome {
    /// The `outcome` member of a result line, `,"outcome":"<raw value>"`, as one literal (the raw values are
    /// plain ASCII, with nothing to escape).
    var ndjsonMember: StaticString {
        switch self {
        case .delivered: #","outcome":"delivered""#
        case .prune: #","outcome":"prune""#
        case .retryable: #","outcome":"retryable""#
        case .inputError: #","outcome":"input_error""#
        case .duplicate: #","outcome":"duplicate""#
        case .notSent: #","outcome":"not_sent""#
        case .inDoubt: #","outcome":"in_doubt""#
        case .expired: #","outcome":"expired""#
        }
    }
}

// MARK: - CSVText

/// Hand-written CSV output: a cell is quoted (with `""` for a quote) only when it holds a comma, a quote or a
/// line break, so plain values stay readable.
enum CSVText {
    static func appendCell(_ text: String?, to out: inout [UInt8]) {
        guard let text, !text.isEmpty else { return }
        let needsQuotes = text.utf8.contains {
            $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D
        }
        if needsQuotes {
            appendQuotedCell(Array(text.utf8), to: &out)
        } else {
            out.append(contentsOf: text.utf8)
        }
    }

    static func appendQuotedCell(_ bytes: [UInt8], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}
