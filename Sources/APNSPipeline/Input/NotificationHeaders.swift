import APNSCore

/// A record's header fields as raw UTF-8 text, before validation (from NDJSON members or CSV cells): ranges in
/// the record's line or cells, so holding a field costs no reference count.
struct RawHeaderFields {
    /// The record's line or cells (a reader's buffer, never changed here).
    let bytes: [UInt8]
    /// Member text that had to be decoded (written with escapes); a field in it has a range past `bytes.count`.
    private var decoded: [UInt8] = []
    var token: Range<Int>?
    var topic: Range<Int>?
    var pushType: Range<Int>?
    var priority: Range<Int>?
    var expiration: Range<Int>?
    var collapseID: Range<Int>?
    var apnsID: Range<Int>?

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Keeps decoded text (a member written with escapes) and returns the range that names it: past `bytes.count`,
    /// so the reader's buffer itself is never copied to hold it.
    mutating func appendDecoded(_ text: String) -> Range<Int> {
        let start = bytes.count + decoded.count
        decoded.append(contentsOf: text.utf8)
        return start..<(bytes.count + decoded.count)
    }

    /// A field's bytes.
    subscript(_ field: Range<Int>) -> ArraySlice<UInt8> {
        guard field.lowerBound >= bytes.count else { return bytes[field] }
        return decoded[(field.lowerBound - bytes.count)..<(field.upperBound - bytes.count)]
    }

    /// The token text, for the result line of an invalid record.
    var tokenText: String? { token.map { String(decoding: self[$0], as: UTF8.self) } }
    /// The record's own topic text, for the result line of an invalid record.
    var topicText: String? { topic.map { String(decoding: self[$0], as: UTF8.self) } }
}

/// Every header value of one record, validated, with the campaign defaults applied. `Token` is how the token is
/// held: a `DeviceToken` for a notification, or a `CheckedToken` where only its validity and bytes are needed.
struct NotificationHeaders<Token> {
    let token: Token
    let topic: Topic
    let pushType: PushType
    let priority: Priority?
    let expiration: ExpirationSetting?
    let collapseID: CollapseID?
    let apnsID: APNSID?
}

extension NotificationHeaders where Token == DeviceToken {
    /// The notification with these headers; consuming, so the headers move into it instead of being copied.
    consuming func notification(payload: [UInt8]) -> PushNotification {
        PushNotification(
            token: token, topic: topic, pushType: pushType, priority: priority, expiration: expiration,
            collapseID: collapseID, apnsID: apnsID, payload: payload
        )
    }
}

/// Turns raw header fields into validated headers with the core types, applying the campaign defaults. Shared by
/// the NDJSON and CSV parsers so both give the same reason for the same mistake. Avoids allocating for the
/// common case: push types and numbers are matched on bytes, and a topic equal to the previous record's reuses it.
struct NotificationHeaderBuilder {
    let defaults: CampaignDefaults
    private let derivedTopics: [Result<Topic, InputError>]
    private var lastTopic: Topic?
    private static let pushTypes: [PushType] = PushType.allCases
    private static let pushTypeNames: [[UInt8]] = pushTypes.map { Array($0.rawValue.utf8) }

    init(defaults: CampaignDefaults) {
        self.defaults = defaults
        derivedTopics = Self.pushTypes.map { type in Result { () throws(InputError) in try defaults.topic(for: type) } }
    }

    /// Validates in this order: token, push type, topic, topic suffix, priority, expiration, collapse id, apns-id.
    mutating func headers(from raw: RawHeaderFields) throws(InputError) -> NotificationHeaders<DeviceToken> {
        // the slice overload: one copy for a canonical token
        let token = try DeviceToken(parsingBytes: raw[Self.tokenField(raw)])
        return try headers(token: token, from: raw)
    }

    /// Validates exactly as `headers(from:)` does, with the same errors in the same order, without making a
    /// `DeviceToken` of a token already in its stored form in the record's own bytes: that token stays where it is
    /// (`CheckedToken.inRecord`), so checking a record allocates nothing for it.
    mutating func checkedHeaders(from raw: RawHeaderFields) throws(InputError) -> NotificationHeaders<CheckedToken> {
        let field = try Self.tokenField(raw)
        if field.upperBound <= raw.bytes.count, DeviceToken.isStoredForm(raw.bytes.span.extracting(field)) {
            return try headers(token: .inRecord(field), from: raw)
        }
        return try headers(token: .parsed(DeviceToken(parsingBytes: raw[field])), from: raw)
    }

    private static func tokenField(_ raw: RawHeaderFields) throws(InputError) -> Range<Int> {
        guard let field = raw.token else { throw InputError(.tokenMissing, "record has no token") }
        return field
    }

    /// Every header after the token (already valid), validated in the order `headers(from:)` names.
    @inline(__always)
    private mutating func headers<Token>(token: Token, from raw: RawHeaderFields) throws(InputError)
        -> NotificationHeaders<Token>
    {
        let pushType =
            try raw.pushType.map { field throws(InputError) in try Self.pushType(raw[field]) } ?? defaults.pushType
        let topic: Topic
        if let topicField = raw.topic {
            topic = try recordTopic(raw[topicField])
        } else {
            topic = try derivedTopic(for: pushType)
        }
        try topic.validate(for: pushType)
        let priority: Priority?
        if let field = raw.priority {
            priority = try Self.priority(raw[field])
        } else {
            priority = defaults.priority(for: pushType)
        }
        var expiration = defaults.expiration
        if let field = raw.expiration { expiration = try Self.expiration(raw[field]) }
        var collapseID = defaults.collapseID
        if let field = raw.collapseID { collapseID = try CollapseID(validatingBytes: Array(raw[field])) }
        var apnsID: APNSID?
        if let field = raw.apnsID { apnsID = try APNSID(parsing: String(decoding: raw[field], as: UTF8.self)) }
        return NotificationHeaders(
            token: token, topic: topic, pushType: pushType, priority: priority, expiration: expiration,
            collapseID: collapseID, apnsID: apnsID
        )
    }

    private mutating func recordTopic(_ bytes: ArraySlice<UInt8>) throws(InputError) -> Topic {
        if let lastTopic, lastTopic.value.utf8.elementsEqual(bytes) { return lastTopic }
        let topic = try Topic(validating: String(decoding: bytes, as: UTF8.self))
        lastTopic = topic
        return topic
    }

    private func derivedTopic(for pushType: PushType) throws(InputError) -> Topic {
        let index = Self.pushTypes.firstIndex(of: pushType) ?? 0
        return try derivedTopics[index].get()
    }

    static func pushType(_ bytes: ArraySlice<UInt8>) throws(InputError) -> PushType {
        for (index, name) in pushTypeNames.enumerated() where name.count == bytes.count {
            if zip(name, bytes).allSatisfy({ $0 == ($1 | 0x20) }) { return pushTypes[index] }
        }
        return try PushType(parsing: String(decoding: bytes, as: UTF8.self))  // throws the canonical message
    }

    static func priority(_ bytes: ArraySlice<UInt8>) throws(InputError) -> Priority {
        if let number = smallInteger(bytes, maximumDigits: 3) { return try Priority(validating: Int(number)) }
        return try Priority(parsing: String(decoding: bytes, as: UTF8.self))
    }

    static func expiration(_ bytes: ArraySlice<UInt8>) throws(InputError) -> ExpirationSetting {
        if let number = smallInteger(bytes, maximumDigits: 18) {
            return .absolute(try Expiration(epochSeconds: number))
        }
        return try ExpirationSetting(parsing: String(decoding: bytes, as: UTF8.self))
    }

    /// Plain decimal digits (no sign, no space) as a number, if there are at most `maximumDigits`.
    static func smallInteger(_ bytes: ArraySlice<UInt8>, maximumDigits: Int) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= maximumDigits else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
