import APNSCore

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

    /// The members of a record the parser knows.
    struct Members {
        var token: JSONScanner.Value?
        var payload: JSONScanner.Value?
        var topic: JSONScanner.Value?
        var pushType: JSONScanner.Value?
        var priority: JSONScanner.Value?
        var expiration: JSONScanner.Value?
        var collapseID: JSONScanner.Value?
        var apnsID: JSONScanner.Value?
        var vars: JSONScanner.Value?
        var repeated: String?

        mutating func set(_ field: Field, _ value: JSONScanner.Value) {
            let previous: JSONScanner.Value?
            switch field {
            case .token: previous = token; token = value
            case .payload: previous = payload; payload = value
            case .topic: previous = topic; topic = value
            case .vars: previous = vars; vars = value
            case .pushType: previous = pushType; pushType = value
            case .priority: previous = priority; priority = value
            case .expiration: previous = expiration; expiration = value
            case .collapseID: previous = collapseID; collapseID = value
            case .apnsID: previous = apnsID; apnsID = value
            }
            if previous != nil, repeated == nil { repeated = field.rawValue }
        }
    }

    /// The known members of a record's object; keys are compared on their bytes, or decoded when they have escapes.
    static func members(of object: JSONScanner.Value, in scanner: JSONScanner) -> Members {
        var found = Members()
        scanner.forEachMember(of: object) { key, value in
            guard value.kind != .null else { return }
            let field: Field?
            switch key.range.count - 2 {
            case 4 where scanner.string(key, equals: "vars"): field = .vars
            case 5 where scanner.string(key, equals: "token"): field = .token
            case 5 where scanner.string(key, equals: "topic"): field = .topic
            case 7 where scanner.string(key, equals: "payload"): field = .payload
            case 7 where scanner.string(key, equals: "apns_id"): field = .apnsID
            case 8 where scanner.string(key, equals: "priority"): field = .priority
            case 9 where scanner.string(key, equals: "push_type"): field = .pushType
            case 10 where scanner.string(key, equals: "expiration"): field = .expiration
            case 11 where scanner.string(key, equals: "collapse_id"): field = .collapseID
            default:
                // Keys written with escapes are compared decoded.
                field = key.hasEscapes ? Field(rawValue: scanner.decodeString(key)) : nil
            }
            if let field { found.set(field, value) }
        }
        return found
    }
}
