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
