import APNSCore

/// Turns one NDJSON line into a campaign record, scanning it once with `JSONScanner` (that scan also validates the
/// payload and reports the members) and passing the payload bytes through exactly as they stand in the line.
///
/// A record is one JSON object. Members (the canonical names; the same names the result file uses):
/// - `token` (string, required): the device token in hex;
/// - `payload` (object): the payload, sent byte for byte as written;
/// - `topic`, `push_type`, `collapse_id`, `apns_id` (strings); `priority`, `expiration` (numbers, or strings of
///   digits; `expiration` also a duration such as `"30m"`, `ExpirationSetting`): the headers, each overriding the
///   campaign default;
/// - `vars` (object): template variables, used when a template is given and the record has no `payload`.
/// Unknown members are ignored (so records can carry the caller's own ids); `null` counts as absent; a known
/// member given twice is an error. Other spellings (`pushType`, `push-type`) are not recognised.
public struct NDJSONRecordParser {
    /// The payload template each line's fields fill; nil when each line holds its payload.
    public let template: PayloadTemplate?
    private var headerBuilder: NotificationHeaderBuilder
    private var templateValues: [PayloadTemplate.Value]
    private var rendered: [UInt8] = []
    /// The last payload handed out, reused while records repeat it.
    private var repeatedPayload = RepeatedPayload()
    /// Whether valid records carry their payload's bytes; false leaves them empty (see
    /// `CampaignReaderOptions.keepsPayloads`). Every payload is checked either way.
    public var keepsPayloads = true
    /// The fields whose values each record carries to its result line (`--keep`); nil keeps none.
    public var keep: KeptFields?

    /// A parser with `defaults` and an optional payload template.
    public init(defaults: CampaignDefaults, template: PayloadTemplate? = nil) {
        self.template = template
        headerBuilder = NotificationHeaderBuilder(defaults: defaults)
        templateValues = [PayloadTemplate.Value](repeating: .missing, count: template?.variableNames.count ?? 0)
    }

    /// Parses the line `bytes[range]` (without its line terminator).
    public mutating func parse(_ bytes: [UInt8], range: Range<Int>, key: RecordKey) -> CampaignRecord {
        guard let keep else { return parseRecord(bytes, range: range, key: key) }
        var record = parseRecord(bytes, range: range, key: key)
        record.kept = keep.values(ofJSONLine: bytes, range: range)
        return record
    }

    @inline(__always)
    private mutating func parseRecord(_ bytes: [UInt8], range: Range<Int>, key: RecordKey) -> CampaignRecord {
        let scanner = JSONScanner(bytes)
        var raw = RawHeaderFields(bytes: bytes)
        do {
            let (headers, payload) = try checkLine(scanner, range: range, raw: &raw) {
                builder, raw throws(InputError) in
                try builder.headers(from: raw)
            }
            let kept =
                keepsPayloads
                ? payload.map { repeatedPayload.array(of: bytes, range: $0) } ?? repeatedPayload.array(of: rendered)
                : []
            return CampaignRecord(key: key, content: .notification(headers.notification(payload: kept)))
        } catch {
            let content = CampaignRecord.Content.invalid(error, tokenText: raw.tokenText, topicText: raw.topicText)
            return CampaignRecord(key: key, content: content)
        }
    }

    /// Checks the line `bytes[range]` exactly as `parse` does (the same outcome, the same error) without building
    /// the notification: a valid record's token is left in `bytes` when it is in its stored form, and its payload
    /// is not kept.
    mutating func check(_ bytes: [UInt8], range: Range<Int>) -> CheckedLine {
        let scanner = JSONScanner(bytes)
        var raw = RawHeaderFields(bytes: bytes)
        do {
            let (headers, _) = try checkLine(scanner, range: range, raw: &raw) { builder, raw throws(InputError) in
                try builder.checkedHeaders(from: raw)
            }
            return .valid(headers.token, headers.topic)
        } catch {
            return .invalid(error, tokenText: raw.tokenText, topicText: raw.topicText)
        }
    }

    /// Every check of a line, in order: the scan (`scanMembers`), the header values (`headers`: the builder's
    /// `headers` or `checkedHeaders`), the payload's rules. Returns the headers and where the payload is: its range
    /// in the line, or nil for the filled template in `rendered`.
    @inline(__always)
    private mutating func checkLine<Token>(
        _ scanner: JSONScanner, range: Range<Int>, raw: inout RawHeaderFields,
        headers: (inout NotificationHeaderBuilder, RawHeaderFields) throws(InputError) -> NotificationHeaders<Token>
    ) throws(InputError) -> (NotificationHeaders<Token>, payload: Range<Int>?) {
        var members = Members()
        try scanMembers(scanner, range: range, into: &members, raw: &raw)
        let checked = try headers(&headerBuilder, raw)
        try checkPayload(of: members, in: scanner, pushType: checked.pushType, priority: checked.priority)
        return (checked, members.payload?.range)
    }

    /// The one scan of the line (it validates the payload too): its members into `members` (filled in place, never
    /// copied), the header fields' text into `raw`.
    @inline(__always)
    private func scanMembers(
        _ scanner: JSONScanner, range: Range<Int>, into members: inout Members, raw: inout RawHeaderFields
    ) throws(InputError) {
        let object: JSONScanner.Value
        do {
            object = try scanner.scanDocument(in: range, reportingMembersTo: Members.reportedDepth, to: &members)
        } catch {
            if let bad = UTF8Validation.firstInvalidByte(scanner.bytes, in: range) {
                throw InputError(.recordInvalidUTF8, "invalid UTF-8 at column \(bad - range.lowerBound + 1)")
            }
            throw InputError(.recordInvalidJSON, "\(error.message) at column \(error.offset - range.lowerBound + 1)")
        }
        guard object.kind == .object else {
            throw InputError(.recordNotObject, "a record must be a JSON object, not \(Self.article(object.kind))")
        }
        if let repeated = members.repeated {
            throw InputError(.recordFieldInvalid, "field '\(repeated.rawValue)' appears more than once")
        }
        raw.token = try Self.text(members.token, "token", in: scanner, raw: &raw)
        raw.topic = try Self.text(members.topic, "topic", in: scanner, raw: &raw)
        raw.pushType = try Self.text(members.pushType, "push_type", in: scanner, raw: &raw)
        raw.priority = try Self.text(members.priority, "priority", allowingNumber: true, in: scanner, raw: &raw)
        raw.expiration = try Self.text(members.expiration, "expiration", allowingNumber: true, in: scanner, raw: &raw)
        raw.collapseID = try Self.text(
            members.collapseID, "collapse_id", loneSurrogate: .collapseIDInvalid, in: scanner, raw: &raw)
        raw.apnsID = try Self.text(members.apnsID, "apns_id", in: scanner, raw: &raw)
    }

    /// Checks the record's payload: the `payload` member as written, or the template filled from `vars` (left in
    /// `rendered`), for the headers' push type and priority.
    @inline(__always)
    private mutating func checkPayload(
        of members: Members, in scanner: JSONScanner, pushType: PushType, priority: Priority?
    ) throws(InputError) {
        if let payload = members.payload {
            guard payload.kind == .object else {
                throw InputError(
                    .payloadNotObject, "field 'payload' must be a JSON object, not \(Self.article(payload.kind))")
            }
            try PayloadRules.validate(
                scannedObject: payload, in: scanner, contentAvailableOnly: members.payloadIsContentAvailableOnly,
                pushType: pushType, priority: priority
            )
            return
        }
        guard let template else {
            throw InputError(.payloadMissing, "record has no 'payload' (and no template is given)")
        }
        try fillTemplateValues(from: members.vars, in: scanner)
        try template.render(into: &rendered, values: templateValues, in: scanner.bytes)
        try Self.validateRendered(rendered, pushType: pushType, priority: priority)
    }

    /// Where a string member's text is in `raw` (decoded into it if it has escapes), or a number's digits where
    /// numbers are allowed. An escaped lone surrogate (`"\ud800"`) names no character: it is an error
    /// (`loneSurrogate`), never U+FFFD.
    private static func text(
        _ value: JSONScanner.Value?, _ name: String, allowingNumber: Bool = false,
        loneSurrogate: InputError.Code = .recordFieldInvalid, in scanner: JSONScanner, raw: inout RawHeaderFields
    ) throws(InputError) -> Range<Int>? {
        guard let value else { return nil }
        switch value.kind {
        case .string:
            if value.hasEscapes {
                guard let text = scanner.decodeStringExactly(value) else {
                    throw InputError(
                        loneSurrogate,
                        "field '\(name)' holds an escaped lone surrogate (\\uD800 to \\uDFFF), which is no character"
                    )
                }
                return raw.appendDecoded(text)
            }
            return (value.range.lowerBound + 1)..<(value.range.upperBound - 1)
        case .number where allowingNumber:
            return value.range
        default:
            let wanted = allowingNumber ? "a number or a string" : "a string"
            throw InputError(.recordFieldInvalid, "field '\(name)' must be \(wanted), not \(article(value.kind))")
        }
    }

    /// Looks the template's variables up among the members of `vars`.
    private mutating func fillTemplateValues(from vars: JSONScanner.Value?, in scanner: JSONScanner) throws(InputError)
    {
        for index in templateValues.indices { templateValues[index] = .missing }
        guard let vars else { return }
        guard vars.kind == .object else {
            throw InputError(.recordFieldInvalid, "field 'vars' must be a JSON object, not \(Self.article(vars.kind))")
        }
        guard let template else { return }
        scanner.forEachMember(of: vars) { key, value in
            let name = scanner.bytes[(key.range.lowerBound + 1)..<(key.range.upperBound - 1)]
            let index =
                key.hasEscapes
                ? template.variableIndex(of: Array(scanner.decodeString(key).utf8))
                : template.variableIndex(of: name)
            guard let index else { return }
            if value.kind == .string {
                templateValues[index] = .jsonString((value.range.lowerBound + 1)..<(value.range.upperBound - 1))
            } else {
                templateValues[index] = .json(value.range)
            }
        }
    }

    /// Checks a rendered payload: oversize stays `PayloadTooLarge`; broken JSON is the template's fault.
    static func validateRendered(_ rendered: [UInt8], pushType: PushType, priority: Priority?) throws(InputError) {
        do {
            try PayloadRules.validate(rendered, pushType: pushType, priority: priority)
        } catch
            where error.code == .payloadInvalidJSON || error.code == .payloadNotObject || error.code == .payloadEmpty
        {
            throw InputError(.templateResultInvalid, "the filled template is not a JSON object: \(error.detail)")
        }
    }

    static func article(_ kind: JSONScanner.Kind) -> String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .true, .false: return "a boolean"
        case .null: return "null"
        }
    }
}

// MARK: - Members

/// Finding the known members of an NDJSON record in one pass over its object.
extension NDJSONRecordParser {
    /// The members a record may have, by their canonical names.
    enum Field: String {
        case token, payload, topic, vars
        case pushType = "push_type"
        case priority, expiration
        case collapseID = "collapse_id"
        case apnsID = "apns_id"
    }

    /// The members of a record the parser knows, and whether its payload's `aps` holds only `content-available`,
    /// gathered from the members one scan of the line reports (`reportedDepth` deep).
    struct Members: JSONMemberVisitor {
        var token: JSONScanner.Value?
        var payload: JSONScanner.Value?
        var topic: JSONScanner.Value?
        var pushType: JSONScanner.Value?
        var priority: JSONScanner.Value?
        var expiration: JSONScanner.Value?
        var collapseID: JSONScanner.Value?
        var apnsID: JSONScanner.Value?
        var vars: JSONScanner.Value?
        /// The first known member given twice. Members holds no reference, so keeping one per line counts none.
        var repeated: Field?
        /// For the last `payload` member: whether its `aps` holds only `content-available`.
        var payloadIsContentAvailableOnly = false
        private var payloadCheck = ContentAvailableOnlyCheck(payloadDepth: 2)

        /// The depth the scan must report members to: the record's, its payload's, and the payload's `aps`'s.
        static let reportedDepth = 3

        /// Takes one member reported by the scan of the line; `null` counts as absent.
        mutating func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner) {
            guard depth == 1 else {
                payloadCheck.member(depth: depth, key: key, value: value, in: scanner)
                return
            }
            let field = value.kind == .null ? nil : NDJSONRecordParser.field(named: key, in: scanner)
            if field == .payload { payloadIsContentAvailableOnly = payloadCheck.isContentAvailableOnly }
            payloadCheck.member(depth: depth, key: key, value: value, in: scanner)
            if let field { set(field, value) }
        }

        mutating func set(_ field: Field, _ value: JSONScanner.Value) {
            let previous: JSONScanner.Value?
            switch field {
            case .token:
                previous = token
                token = value
            case .payload:
                previous = payload
                payload = value
            case .topic:
                previous = topic
                topic = value
            case .vars:
                previous = vars
                vars = value
            case .pushType:
                previous = pushType
                pushType = value
            case .priority:
                previous = priority
                priority = value
            case .expiration:
                previous = expiration
                expiration = value
            case .collapseID:
                previous = collapseID
                collapseID = value
            case .apnsID:
                previous = apnsID
                apnsID = value
            }
            if previous != nil, repeated == nil { repeated = field }
        }
    }

    /// The known members of a record's object, found by the scan of its line (see `Members.member`).
    static func field(named key: JSONScanner.Value, in scanner: JSONScanner) -> Field? {
        // Keys of up to eight bytes are compared as one word each; longer ones on their bytes; keys with escapes
        // decoded.
        if let word = scanner.shortWord(key) {
            switch word {
            case FieldWord.token: return .token
            case FieldWord.payload: return .payload
            case FieldWord.topic: return .topic
            case FieldWord.vars: return .vars
            case FieldWord.priority: return .priority
            case FieldWord.apnsID: return .apnsID
            default: return nil
            }
        }
        switch key.range.count - 2 {
        case _ where key.hasEscapes: return Field(rawValue: scanner.decodeString(key))
        case 9 where scanner.string(key, equals: "push_type"): return .pushType
        case 10 where scanner.string(key, equals: "expiration"): return .expiration
        case 11 where scanner.string(key, equals: "collapse_id"): return .collapseID
        default: return nil
        }
    }

    /// `JSONScanner.word(_:)` of each member name of up to eight bytes, written out so that matching a key is one
    /// comparison each (a test checks every one against its name).
    enum FieldWord {
        static let token: UInt64 = 0x6E_656B_6F74  // "token"
        static let payload: UInt64 = 0x64_616F_6C79_6170  // "payload"
        static let topic: UInt64 = 0x63_6970_6F74  // "topic"
        static let vars: UInt64 = 0x7372_6176  // "vars"
        static let priority: UInt64 = 0x7974_6972_6F69_7270  // "priority"
        static let apnsID: UInt64 = 0x64_695F_736E_7061  // "apns_id"
    }
}

// MARK: - CSV read as NDJSON

/// Telling a CSV file read as NDJSON (standard input or a pipe without `--input-format csv`) by its first line.
extension NDJSONRecordParser {
    /// Whether a first line that is no JSON object looks like a CSV header: it does not start with `{` or `[`
    /// after white space, and it holds a comma, a semicolon or a tab, or names a `token` column.
    static func looksLikeCSVHeader(_ bytes: [UInt8], range: Range<Int>) -> Bool {
        guard let first = range.first(where: { !JSONText.isSpace(bytes[$0]) }),
            bytes[first] != UInt8(ascii: "{"), bytes[first] != UInt8(ascii: "[")
        else { return false }
        let line = bytes[first..<range.upperBound]
        if line.contains(where: { CSVDelimiter.candidates.map(\.byte).contains($0) }) { return true }
        return String(decoding: line, as: UTF8.self).lowercased().contains("token")
    }

    /// The first line's error, with the fix added when the line looks like a CSV header (`looksLikeCSVHeader`);
    /// nil when it does not.
    static func csvHinted(_ error: InputError, _ bytes: [UInt8], range: Range<Int>) -> InputError? {
        guard error.code == .recordInvalidJSON || error.code == .recordNotObject,
            looksLikeCSVHeader(bytes, range: range)
        else { return nil }
        return InputError(error.code, "\(error.detail); \(csvHint)")
    }

    /// `csvHinted` for a checked first line.
    static func firstLine(_ checked: CheckedLine, _ bytes: [UInt8], range: Range<Int>) -> CheckedLine {
        guard case .invalid(let error, let tokenText, let topicText) = checked,
            let hinted = csvHinted(error, bytes, range: range)
        else { return checked }
        return .invalid(hinted, tokenText: tokenText, topicText: topicText)
    }

    /// `csvHinted` for a parsed first line.
    static func firstLine(_ record: CampaignRecord, _ bytes: [UInt8], range: Range<Int>) -> CampaignRecord {
        guard case .invalid(let error, let tokenText, let topicText) = record.content,
            let hinted = csvHinted(error, bytes, range: range)
        else { return record }
        var record = record
        record.content = .invalid(hinted, tokenText: tokenText, topicText: topicText)
        return record
    }

    /// What the hint says.
    static let csvHint =
        "this looks like a CSV header, not NDJSON: give --input-format csv (standard input and "
        + "pipes are read as NDJSON unless it is given)"
}
