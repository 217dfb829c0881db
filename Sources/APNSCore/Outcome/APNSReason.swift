/// Every rejection reason APNs documents, as it appears in an error body's `"reason"` or in GOAWAY debug data,
/// with an `unknown` case that keeps any reason Apple adds later.
public enum APNSReason: Hashable, Sendable, CustomStringConvertible {
    case badCollapseID
    case badDeviceToken
    case badExpirationDate
    case badMessageID
    case badPriority
    case badTopic
    case deviceTokenNotForTopic
    case duplicateHeaders
    case idleTimeout
    case invalidPushType
    case missingDeviceToken
    case missingTopic
    case payloadEmpty
    case topicDisallowed
    case badCertificate
    case badCertificateEnvironment
    case expiredProviderToken
    case forbidden
    case invalidProviderToken
    case missingProviderToken
    case unrelatedKeyIDInToken
    case badEnvironmentKeyIDInToken
    case badPath
    case methodNotAllowed
    case expiredToken
    case unregistered
    case payloadTooLarge
    case tooManyProviderTokenUpdates
    case tooManyRequests
    case internalServerError
    case serviceUnavailable
    case shutdown
    case unknown(String)

    /// Every documented reason (without `unknown`), for tables and tests.
    public static let documented: [APNSReason] = [
        .badCollapseID, .badDeviceToken, .badExpirationDate, .badMessageID, .badPriority, .badTopic,
        .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
        .missingTopic, .payloadEmpty, .topicDisallowed, .badCertificate, .badCertificateEnvironment,
        .expiredProviderToken, .forbidden, .invalidProviderToken, .missingProviderToken, .unrelatedKeyIDInToken,
        .badEnvironmentKeyIDInToken, .badPath, .methodNotAllowed, .expiredToken, .unregistered, .payloadTooLarge,
        .tooManyProviderTokenUpdates, .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown,
    ]

    private static let byName: [String: APNSReason] = Dictionary(
        uniqueKeysWithValues: documented.map { ($0.rawValue, $0) }
    )

    /// Parses a reason string exactly as APNs spells it; anything else becomes `unknown`.
    public init(rawValue: String) {
        self = Self.byName[rawValue] ?? .unknown(rawValue)
    }

    /// The reason exactly as APNs spells it.
    public var rawValue: String {
        switch self {
        case .badCollapseID: return "BadCollapseId"
        case .badDeviceToken: return "BadDeviceToken"
        case .badExpirationDate: return "BadExpirationDate"
        case .badMessageID: return "BadMessageId"
        case .badPriority: return "BadPriority"
        case .badTopic: return "BadTopic"
        case .deviceTokenNotForTopic: return "DeviceTokenNotForTopic"
        case .duplicateHeaders: return "DuplicateHeaders"
        case .idleTimeout: return "IdleTimeout"
        case .invalidPushType: return "InvalidPushType"
        case .missingDeviceToken: return "MissingDeviceToken"
        case .missingTopic: return "MissingTopic"
        case .payloadEmpty: return "PayloadEmpty"
        case .topicDisallowed: return "TopicDisallowed"
        case .badCertificate: return "BadCertificate"
        case .badCertificateEnvironment: return "BadCertificateEnvironment"
        case .expiredProviderToken: return "ExpiredProviderToken"
        case .forbidden: return "Forbidden"
        case .invalidProviderToken: return "InvalidProviderToken"
        case .missingProviderToken: return "MissingProviderToken"
        case .unrelatedKeyIDInToken: return "UnrelatedKeyIdInToken"
        case .badEnvironmentKeyIDInToken: return "BadEnvironmentKeyIdInToken"
        case .badPath: return "BadPath"
        case .methodNotAllowed: return "MethodNotAllowed"
        case .expiredToken: return "ExpiredToken"
        case .unregistered: return "Unregistered"
        case .payloadTooLarge: return "PayloadTooLarge"
        case .tooManyProviderTokenUpdates: return "TooManyProviderTokenUpdates"
        case .tooManyRequests: return "TooManyRequests"
        case .internalServerError: return "InternalServerError"
        case .serviceUnavailable: return "ServiceUnavailable"
        case .shutdown: return "Shutdown"
        case .unknown(let text): return text
        }
    }

    /// The HTTP status APNs pairs with this reason (nil for unknown reasons).
    public var status: Int? {
        switch self {
        case .badCollapseID, .badDeviceToken, .badExpirationDate, .badMessageID, .badPriority, .badTopic,
            .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
            .missingTopic, .payloadEmpty, .topicDisallowed:
            return 400
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
            .missingProviderToken, .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken:
            return 403
        case .badPath: return 404
        case .methodNotAllowed: return 405
        case .expiredToken, .unregistered: return 410
        case .payloadTooLarge: return 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: return 429
        case .internalServerError: return 500
        case .serviceUnavailable, .shutdown: return 503
        case .unknown: return nil
        }
    }

    /// The reason as APNs spells it.
    public var description: String { rawValue }
}

// MARK: - APNSErrorBody

/// The parsed APNs error body (`{"reason":"…","timestamp":…}`), as it comes in a response or in a GOAWAY's debug
/// data (`docs/APNS.md`, "Responses"). The one place that reads it.
public struct APNSErrorBody: Sendable, Hashable {
    /// The reason APNs gave; nil when the answer carried none.
    public var reason: APNSReason?
    /// For 410: milliseconds since the epoch at which APNs last confirmed the token was invalid.
    public var timestamp: Int64?

    /// Reads `reason` and `timestamp`; a body that is empty or not such JSON leaves them nil.
    public init<Bytes: Collection<UInt8>>(parsing bytes: Bytes) {
        guard !bytes.isEmpty else { return }
        let body = Array(bytes)
        let scanner = JSONScanner(body)
        guard let object = try? scanner.scanDocument(in: 0..<body.count), object.kind == .object else { return }
        scanner.forEachMember(of: object) { key, value in
            if scanner.string(key, equals: "reason"), value.kind == .string {
                reason = APNSReason(rawValue: scanner.decodeString(value))
            } else if scanner.string(key, equals: "timestamp"), value.kind == .number {
                timestamp = Int64(String(decoding: body[value.range], as: UTF8.self))
            }
        }
    }
}
