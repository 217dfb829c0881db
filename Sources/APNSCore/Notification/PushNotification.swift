/// One notification ready for the wire: the device token, every APNs header value, and the payload bytes as they
/// stood in the input (validated, never re-serialised). Immutable: with `var` fields the compiler copied each one
/// built in `init` and released the original (docs/PERFORMANCE.md, "What made it faster").
public struct PushNotification: Sendable, Hashable {
    /// The device token the notification goes to.
    public let token: DeviceToken
    /// The `apns-topic` header: the app's bundle id with its push type's suffix.
    public let topic: Topic
    // `expiration` before the two one-byte fields, which fill the padding after its nil flag: 80 bytes, not 88
    // (the dispatcher's `PendingSend` holds one and must fit in 128).
    /// Absolute, or relative until the dispatcher resolves it at the first send (`ExpirationSetting`).
    public let expiration: ExpirationSetting?
    /// The `apns-push-type` header.
    public let pushType: PushType
    /// nil leaves the header out (APNs then uses 10).
    public let priority: Priority?
    /// The `apns-collapse-id` header; nil leaves it out.
    public let collapseID: CollapseID?
    /// The `apns-id` header; nil leaves it out and APNs assigns one.
    public let apnsID: APNSID?
    /// The JSON payload bytes, exactly as sent.
    public let payload: [UInt8]

    /// A notification from its parts; call `validate()` to check the rules that join them.
    public init(
        token: DeviceToken,
        topic: Topic,
        pushType: PushType,
        priority: Priority? = nil,
        expiration: ExpirationSetting? = nil,
        collapseID: CollapseID? = nil,
        apnsID: APNSID? = nil,
        payload: [UInt8]
    ) {
        self.token = token
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// The same notification with `expiration` in place of its own (a relative one resolved at its first send).
    public func replacingExpiration(_ expiration: ExpirationSetting?) -> PushNotification {
        PushNotification(
            token: token, topic: topic, pushType: pushType, priority: priority, expiration: expiration,
            collapseID: collapseID, apnsID: apnsID, payload: payload)
    }

    /// Checks the rules that join several fields: the topic's suffix for the push type, and the payload for the
    /// push type and priority.
    public func validate() throws(InputError) {
        try topic.validate(for: pushType)
        try PayloadRules.validate(payload, pushType: pushType, priority: priority)
    }

    /// The priority to send when a record names none: 5 for background pushes (APNs rejects 10 for
    /// content-available-only payloads), otherwise none (APNs's default, 10).
    public static func defaultPriority(for pushType: PushType) -> Priority? {
        pushType == .background ? .powerAware : nil
    }
}

// MARK: - Topic

/// The `apns-topic` header: the app's bundle id plus the suffix its push type requires (`.voip`, `.complication`, …).
public struct Topic: Hashable, Sendable, CustomStringConvertible {
    /// The longest topic APNs accepts, in UTF-8 bytes.
    public static let maximumBytes = 255

    /// The topic as sent in the header.
    public let value: String
    /// The topic text.
    public var description: String { value }

    /// Validates the topic's characters: non-empty printable ASCII without spaces.
    public init(validating value: String) throws(InputError) {
        guard !value.isEmpty else { throw InputError(.topicMissing, "topic is empty") }
        guard value.utf8.count <= Self.maximumBytes else {
            throw InputError(.topicInvalid, "topic is longer than \(Self.maximumBytes) bytes")
        }
        guard value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw InputError(.topicInvalid, "topic '\(value)' must be printable ASCII without spaces")
        }
        self.value = value
    }

    /// Checks that the topic carries the suffix the push type requires.
    public func validate(for pushType: PushType) throws(InputError) {
        guard let suffix = pushType.topicSuffix else { return }
        guard value.hasSuffix(suffix), value.utf8.count > suffix.utf8.count else {
            throw InputError(
                .topicSuffixMissing,
                "push type \(pushType.rawValue) needs a topic ending in '\(suffix)' (for example '\(value)\(suffix)')"
            )
        }
    }

    /// The topic for a bundle id and push type: the bundle id with the push type's suffix appended.
    public static func derived(bundleID: String, pushType: PushType) throws(InputError) -> Topic {
        let topic = try Topic(validating: bundleID)
        guard let suffix = pushType.topicSuffix, !bundleID.hasSuffix(suffix) else { return topic }
        return try Topic(validating: bundleID + suffix)
    }
}

// MARK: - PushType

/// The `apns-push-type` header values APNs accepts, with what each one requires of the topic and payload.
public enum PushType: String, Sendable, CaseIterable, Hashable {
    case alert
    case background
    case location
    case voip
    case complication
    case fileprovider
    case mdm
    case liveactivity
    case pushtotalk
    case widgets

    /// Parses a push type as written in a campaign file or on the command line (case-insensitive).
    public init(parsing text: some StringProtocol) throws(InputError) {
        guard let type = PushType(rawValue: text.lowercased()) else {
            let known = PushType.allCases.map(\.rawValue).joined(separator: ", ")
            throw InputError(.pushTypeUnknown, "unknown push type '\(text)' (known: \(known))")
        }
        self = type
    }

    /// The suffix APNs requires on the bundle id in `apns-topic` for this push type, if any.
    public var topicSuffix: String? {
        switch self {
        case .alert, .background, .mdm: return nil
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .location: return ".location-query"
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .widgets: return ".push-type.widgets"
        }
    }

    /// The largest payload APNs accepts for this push type, in bytes.
    public var maximumPayloadBytes: Int {
        self == .voip ? 5120 : 4096
    }
}

// MARK: - Priority

/// The `apns-priority` header: 10 sends immediately, 5 is power-aware, 1 puts power first and never wakes the device.
public enum Priority: Int, Sendable, CaseIterable, Hashable {
    case powerFirst = 1
    case powerAware = 5
    case immediate = 10

    /// Parses a priority given as text ("10", "5" or "1").
    public init(parsing text: some StringProtocol) throws(InputError) {
        guard let number = Int(text), let priority = Priority(rawValue: number) else {
            throw InputError(.priorityInvalid, "priority '\(text)' is not one of 10, 5, 1")
        }
        self = priority
    }

    /// Validates a priority given as a number.
    public init(validating number: Int) throws(InputError) {
        guard let priority = Priority(rawValue: number) else {
            throw InputError(.priorityInvalid, "priority \(number) is not one of 10, 5, 1")
        }
        self = priority
    }
}

// MARK: - Expiration

/// The `apns-expiration` header: UNIX epoch seconds after which APNs stops trying; `0` means deliver once, never store.
public struct Expiration: Hashable, Sendable, CustomStringConvertible {
    /// Deliver once, do not store.
    public static let immediately = Expiration(uncheckedEpochSeconds: 0)
    /// The largest value accepted: the header is a 32-bit epoch in practice.
    public static let maximumEpochSeconds: Int64 = 4_294_967_295

    /// UNIX epoch seconds; 0 means deliver once, never store.
    public let epochSeconds: Int64
    /// The epoch seconds as decimal digits, as sent in the header.
    public var description: String { String(epochSeconds) }

    /// Validates epoch seconds (0 allowed).
    public init(epochSeconds: Int64) throws(InputError) {
        guard epochSeconds >= 0, epochSeconds <= Self.maximumEpochSeconds else {
            throw InputError(
                .expirationInvalid,
                "expiration \(epochSeconds) is not epoch seconds between 0 and \(Self.maximumEpochSeconds)")
        }
        self.epochSeconds = epochSeconds
    }

    /// Parses epoch seconds written as decimal digits.
    public init(parsing text: some StringProtocol) throws(InputError) {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int64(text)
        else {
            throw InputError(.expirationInvalid, "expiration '\(text)' is not epoch seconds")
        }
        try self.init(epochSeconds: value)
    }

    private init(uncheckedEpochSeconds: Int64) {
        self.epochSeconds = uncheckedEpochSeconds
    }
}

// MARK: - CollapseID

/// The `apns-collapse-id` header: a non-empty identifier of at most 64 bytes; the device shows only the latest per id.
///
/// Any Unicode text that `HeaderFieldValue` allows: no blank at either end, no control character.
public struct CollapseID: Hashable, Sendable, CustomStringConvertible {
    /// The longest collapse id APNs accepts, in UTF-8 bytes.
    public static let maximumBytes = 64

    /// The collapse id as sent in the header.
    public let value: String
    /// The collapse id text.
    public var description: String { value }

    /// Validates a collapse id: non-empty, at most 64 bytes, no blank at either end, no control character.
    public init(validating value: String) throws(InputError) {
        guard !value.isEmpty else { throw InputError(.collapseIDInvalid, "collapse id is empty") }
        let bytes = value.utf8.count
        guard bytes <= Self.maximumBytes else {
            throw InputError(.collapseIDTooLong, "collapse id is \(bytes) bytes: longer than \(Self.maximumBytes)")
        }
        if let problem = HeaderFieldValue.problem(in: value) {
            throw InputError(
                .collapseIDInvalid, "collapse id '\(value)' \(problem): not allowed in an HTTP/2 header value")
        }
        self.value = value
    }

    /// Validates a collapse id given as bytes (a header as received, a CSV cell): they must also be valid UTF-8.
    public init(validatingBytes bytes: [UInt8]) throws(InputError) {
        if let bad = UTF8Validation.firstInvalidByte(bytes, in: 0..<bytes.count) {
            throw InputError(.collapseIDInvalid, "collapse id is not valid UTF-8 (byte \(bad + 1))")
        }
        try self.init(validating: String(decoding: bytes, as: UTF8.self))
    }
}

// MARK: - HeaderFieldValue

/// The rule every header value the tool sends must meet: RFC 9113 §8.2.1 plus a stricter line on control
/// characters (docs/FILES.md, "Header values"). A value that breaks it never reaches the wire: a strict HTTP/2 peer
/// answers it with a stream or connection error, which would put other requests in doubt.
///
/// RFC 9113 §8.2.1: a field value must not contain NUL, CR or LF, and must not start or end with SP or HTAB.
/// Stricter here: no other C0 control, no DEL and no C1 control (U+0080 to U+009F) either; none belongs in an
/// identifier, and they are what a terminal acts on when the value is printed. Bytes must be valid UTF-8 (which
/// also rules out encoded lone surrogates).
public enum HeaderFieldValue {
    /// Why `text` cannot be sent as a header value, or nil if it can ("starts with a blank", …).
    public static func problem(in text: String) -> String? {
        guard let first = text.utf8.first, let last = text.utf8.last else { return nil }
        if first == 0x20 || first == 0x09 { return "starts with a blank" }
        if last == 0x20 || last == 0x09 { return "ends with a blank" }
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return nil }
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00, 0x0A, 0x0D: return "contains NUL, CR or LF"
            case 0x01..<0x20, 0x7F...0x9F: return "contains a control character"
            default: continue
            }
        }
        return nil
    }
}
