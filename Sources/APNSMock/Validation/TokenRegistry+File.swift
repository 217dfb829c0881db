import APNSCore

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

    private static func timestamp(_ text: Substring?, token: DeviceToken, line: Int) throws(MockConfigurationError) -> Int64 {
        guard let text else { return derivedTimestamp(for: token) }
        guard text.count <= 15, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(text) else {
            throw .registryLine(line, "timestamp '\(text)' is not milliseconds since the epoch")
        }
        return value
    }
}
