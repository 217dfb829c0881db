import APNSCore

/// The device tokens the mock treats as dead, foreign or bad: entries loaded from a registry file plus, unless
/// switched off, three suffix rules, so sample campaigns can contain dead tokens without any file.
///
/// Suffix rules (on the token's lowercase hex; a file entry for the same token wins):
/// - ends in `dead` → 410 `Unregistered`, with a timestamp derived from the token (`derivedTimestamp(for:)`);
/// - ends in `0bad` → 400 `BadDeviceToken`;
/// - ends in `f0f0` → 400 `DeviceTokenNotForTopic`.
///
/// The registry is consulted last, after every header, authentication and payload check has passed.
public struct TokenRegistry: Hashable, Sendable {
    /// What the registry says about one token.
    public enum Entry: Hashable, Sendable {
        /// 410 `Unregistered`, with the time (ms since the epoch) APNs last saw the token valid.
        case unregistered(timestampMilliseconds: Int64)
        /// 410 `ExpiredToken`, with a timestamp as for `unregistered`.
        case expired(timestampMilliseconds: Int64)
        /// 400 `DeviceTokenNotForTopic`, unless the request's topic equals `validTopic` (nil: no topic is right).
        case wrongTopic(validTopic: String?)
        /// 400 `BadDeviceToken` (for example a sandbox token sent to production).
        case bad
    }

    /// Why a request is rejected because of its token: the reason plus, for 410s, the timestamp.
    public struct Rejection: Hashable, Sendable {
        /// The reason the mock answers with for this token.
        public let reason: APNSReason
        /// The `timestamp` of an Unregistered answer, in milliseconds since the epoch; nil for none.
        public let timestampMilliseconds: Int64?
    }

    /// The suffix that makes a token answer 410 `Unregistered` under the suffix rules.
    public static let unregisteredSuffix: StaticString = "dead"
    /// The suffix that makes a token answer 400 `BadDeviceToken` under the suffix rules.
    public static let badDeviceTokenSuffix: StaticString = "0bad"
    /// The suffix that makes a token answer 400 `DeviceTokenNotForTopic` under the suffix rules.
    public static let notForTopicSuffix: StaticString = "f0f0"

    /// The earliest timestamp `derivedTimestamp(for:)` returns: 2023-11-14T22:13:20Z in ms.
    public static let derivedTimestampBase: Int64 = 1_700_000_000_000
    /// Derived timestamps fall within one year after `derivedTimestampBase`.
    public static let derivedTimestampSpan: Int64 = 365 * 24 * 3600 * 1000

    /// Whether the `dead` / `0bad` / `f0f0` suffix rules apply.
    public var usesSuffixRules: Bool
    private var entries: [DeviceToken: Entry]

    /// A registry with the given entries; suffix rules on by default.
    public init(entries: [DeviceToken: Entry] = [:], usesSuffixRules: Bool = true) {
        self.entries = entries
        self.usesSuffixRules = usesSuffixRules
    }

    /// The number of file (or programmatic) entries, not counting the suffix rules.
    public var count: Int { entries.count }

    /// The entry for a token, from the entries only (not the suffix rules).
    public func entry(for token: DeviceToken) -> Entry? { entries[token] }

    /// Adds or replaces the entry for a token.
    public mutating func mark(_ token: DeviceToken, as entry: Entry) {
        entries[token] = entry
    }

    /// The rejection for a request to `token` on `topic`, or nil if the token is good.
    public func rejection(for token: DeviceToken, topic: String) -> Rejection? {
        rejection(for: token, topicBytes: Array(topic.utf8))
    }

    /// The rejection for a request to `token` on the topic given as its header bytes.
    func rejection(for token: DeviceToken, topicBytes: [UInt8]) -> Rejection? {
        if !entries.isEmpty, let rejection = entryRejection(for: token, topicBytes: topicBytes) { return rejection }
        return suffixRejection(hex: token.hex.utf8.span)
    }

    /// The same for a token given as its stored form (`DeviceToken.isStoredForm`), as a request's path carries it:
    /// without file entries, nothing is made.
    func rejection(forStoredForm hex: ArraySlice<UInt8>, topicBytes: [UInt8]) -> Rejection? {
        if !entries.isEmpty, let token = try? DeviceToken(parsingBytes: hex),
            let rejection = entryRejection(for: token, topicBytes: topicBytes)
        {
            return rejection
        }
        return suffixRejection(hex: hex.span)
    }

    private func entryRejection(for token: DeviceToken, topicBytes: [UInt8]) -> Rejection? {
        guard let entry = entries[token] else { return nil }
        switch entry {
        case .unregistered(let timestamp): return Rejection(reason: .unregistered, timestampMilliseconds: timestamp)
        case .expired(let timestamp): return Rejection(reason: .expiredToken, timestampMilliseconds: timestamp)
        case .wrongTopic(let validTopic):
            let matches = validTopic.map { $0.utf8.elementsEqual(topicBytes) } ?? false
            return matches ? nil : Rejection(reason: .deviceTokenNotForTopic, timestampMilliseconds: nil)
        case .bad: return Rejection(reason: .badDeviceToken, timestampMilliseconds: nil)
        }
    }

    private func suffixRejection(hex: Span<UInt8>) -> Rejection? {
        guard usesSuffixRules else { return nil }
        if Self.hasSuffix(hex, Self.unregisteredSuffix) {
            return Rejection(reason: .unregistered, timestampMilliseconds: Self.derivedTimestamp(forHex: hex))
        }
        if Self.hasSuffix(hex, Self.badDeviceTokenSuffix) {
            return Rejection(reason: .badDeviceToken, timestampMilliseconds: nil)
        }
        if Self.hasSuffix(hex, Self.notForTopicSuffix) {
            return Rejection(reason: .deviceTokenNotForTopic, timestampMilliseconds: nil)
        }
        return nil
    }

    /// The deterministic "last seen valid" timestamp of a token without one of its own: the FNV-1a hash of its
    /// lowercase hex, mapped into the year after `derivedTimestampBase` (so always in the past, and stable).
    public static func derivedTimestamp(for token: DeviceToken) -> Int64 {
        derivedTimestamp(forHex: token.hex.utf8.span)
    }

    private static func derivedTimestamp(forHex hex: Span<UInt8>) -> Int64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for index in hex.indices {
            hash = (hash ^ UInt64(hex[index])) &* 0x0000_0100_0000_01B3
        }
        return derivedTimestampBase + Int64(hash % UInt64(derivedTimestampSpan))
    }

    @inline(__always)
    private static func hasSuffix(_ hex: Span<UInt8>, _ suffix: StaticString) -> Bool {
        let count = suffix.utf8CodeUnitCount
        guard hex.count >= count else { return false }
        return suffix.withUTF8Buffer { expected in
            var index = hex.count - count
            for byte in expected {
                if hex[index] != byte { return false }
                index += 1
            }
            return true
        }
    }
}

// MARK: - File

/// The token-registry file format.
///
/// One entry per line, fields separated by spaces or tabs; `#` starts a comment (whole line or trailing); blank
/// lines are ignored:
///
///     # kind          token (hex)                          optional
///     unregistered    <hex>                                [timestamp-ms]   → 410 Unregistered
///     expired         <hex>                                [timestamp-ms]   → 410 ExpiredToken
///     wrong-topic     <hex>                                [valid-topic]    → 400 DeviceTokenNotForTopic
///     bad             <hex>                                                 → 400 BadDeviceToken
///
/// The timestamp is milliseconds since the epoch (the token's "last seen valid" time); without one, the
/// deterministic `TokenRegistry.derivedTimestamp(for:)` is used. A `wrong-topic` entry with a topic answers
/// `DeviceTokenNotForTopic` for every other topic and 200 for that one; without a topic, for every topic.
/// Tokens follow `DeviceToken`'s rules (even-length hex, 16 to 200 bytes, any case). A token listed twice is an error.
extension TokenRegistry {
    /// Parses a registry file's text. Errors name the line number and what was wrong.
    public init(parsing text: String, usesSuffixRules: Bool = true) throws(MockConfigurationError) {
        var entries: [DeviceToken: Entry] = [:]
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let content = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = content.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let kind = fields.first else { continue }
            guard fields.count >= 2 else { throw .registryLine(lineNumber, "'\(kind)' needs a device token") }
            let token: DeviceToken
            do throws(InputError) {
                token = try DeviceToken(parsing: fields[1])
            } catch {
                throw .registryLine(lineNumber, error.detail)
            }
            let entry = try Self.entry(kind: kind, token: token, extra: fields.dropFirst(2), line: lineNumber)
            guard entries.updateValue(entry, forKey: token) == nil else {
                throw .registryLine(lineNumber, "token \(token.hex) is listed twice")
            }
        }
        self.init(entries: entries, usesSuffixRules: usesSuffixRules)
    }

    private static func entry(
        kind: Substring,
        token: DeviceToken,
        extra: ArraySlice<Substring>,
        line: Int
    ) throws(MockConfigurationError) -> Entry {
        guard extra.count <= 1 else { throw .registryLine(line, "too many fields for '\(kind)'") }
        let argument = extra.first
        switch kind {
        case "unregistered":
            return .unregistered(timestampMilliseconds: try timestamp(argument, token: token, line: line))
        case "expired":
            return .expired(timestampMilliseconds: try timestamp(argument, token: token, line: line))
        case "wrong-topic":
            return .wrongTopic(validTopic: argument.map(String.init))
        case "bad":
            guard argument == nil else { throw .registryLine(line, "'bad' takes no value after the token") }
            return .bad
        default:
            throw .registryLine(line, "unknown kind '\(kind)' (known: unregistered, expired, wrong-topic, bad)")
        }
    }

    private static func timestamp(_ text: Substring?, token: DeviceToken, line: Int) throws(MockConfigurationError)
        -> Int64
    {
        guard let text else { return derivedTimestamp(for: token) }
        guard text.count <= 15, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(text) else {
            throw .registryLine(line, "timestamp '\(text)' is not milliseconds since the epoch")
        }
        return value
    }
}
