import APNSCore

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
        if let token, let topic, isPlainDelivery {
            // The commonest line: the same bytes as below, each string's closing quote in the literal after it.
            Self.append(#","token":""#, to: &out)
            JSONText.appendStringContents(token, to: &out)
            deliveryMiddle.update(for: topic)
            out.append(contentsOf: deliveryMiddle.bytes)
            if let apnsID {
                Self.append(#","apns_id":""#, to: &out)
                JSONText.appendStringContents(apnsID, to: &out)
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
        if let timestamp { Self.appendMember(#","timestamp":"#, timestamp, to: &out) }
        if attempts == 1, pushType == nil, priority == nil, expiration == nil, collapseID == nil, payload == nil {
            Self.append(",\"attempts\":1}\n", to: &out)
            return
        }
        Self.appendMember(#","attempts":"#, attempts, to: &out)
        if let pushType { Self.appendMember(#","push_type":""#, pushType.rawValue, to: &out) }
        if let priority { Self.appendMember(#","priority":"#, priority.rawValue, to: &out) }
        if let expiration { Self.appendMember(#","expiration":"#, expiration, to: &out) }
        if let collapseID { Self.appendMember(#","collapse_id":""#, collapseID, to: &out) }
        if let payload {
            Self.append(#","payload":"#, to: &out)
            Self.appendPayload(payload, to: &out)
        }
        Self.append("}\n", to: &out)
    }

    /// Appends the CSV header row.
    static func appendCSVHeader(to out: inout [UInt8]) {
        out.append(contentsOf: fieldNames.joined(separator: ",").utf8)
        out.append(UInt8(ascii: "\n"))
    }

    /// Appends the record as one CSV row (with its `\n`), in `fieldNames` order; `file` as for NDJSON.
    func appendCSV(file: String, to out: inout [UInt8]) {
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
        if let timestamp { DecimalText.append(timestamp, to: &out) }
        out.append(UInt8(ascii: ","))
        DecimalText.append(attempts, to: &out)
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(pushType?.rawValue, to: &out)
        out.append(UInt8(ascii: ","))
        if let priority { DecimalText.append(priority.rawValue, to: &out) }
        out.append(UInt8(ascii: ","))
        if let expiration { DecimalText.append(expiration, to: &out) }
        out.append(UInt8(ascii: ","))
        CSVText.appendCell(collapseID, to: &out)
        out.append(UInt8(ascii: ","))
        if let payload { CSVText.appendQuotedCell(payload, to: &out) }
        out.append(UInt8(ascii: "\n"))
    }

    /// Delivered with 200 in one attempt, with nothing to say but its apns-id: the line `appendNDJSON` writes in
    /// the fewest appends.
    private var isPlainDelivery: Bool {
        outcome == .delivered && status == 200 && reason == nil && detail == nil && timestamp == nil && attempts == 1
            && pushType == nil && priority == nil && expiration == nil && collapseID == nil && payload == nil
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

    /// A payload that is a JSON object goes in as it stands (line breaks, which can only be white space between
    /// tokens, become spaces so the line stays one line); anything else goes in as a JSON string.
    private static func appendPayload(_ payload: [UInt8], to out: inout [UInt8]) {
        let isObject = (try? JSONScanner(payload).scanDocument(in: 0..<payload.count))?.kind == .object
        guard isObject else {
            out.append(UInt8(ascii: "\""))
            JSONText.appendEscaped(payload, 0..<payload.count, to: &out)
            out.append(UInt8(ascii: "\""))
            return
        }
        out.append(contentsOf: oneLine(payload))
    }

    /// A payload object as a result line holds it: its line breaks (JSON white space there, since strings cannot
    /// hold them raw) as spaces, so the line stays whole. The writer writes it so and the reader reads it so, so a
    /// line read and written again reads back the same. The same array when there is none.
    static func oneLine(_ payload: [UInt8]) -> [UInt8] {
        guard payload.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { return payload }
        return payload.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
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
        }
    }
}
