/// The `apns-topic` header: the app's bundle id plus the suffix its push type requires (`.voip`, `.complication`, …).
public struct Topic: Hashable, Sendable, CustomStringConvertible {
    public static let maximumBytes = 255

    public let value: String
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
