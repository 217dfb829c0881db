/// Why one campaign record cannot be sent: a stable machine-readable code plus a human detail.
///
/// The code's raw value is what result files print as the reason of an `input_error` line; it never changes
/// once released. The detail says exactly what was wrong ("63 hex digits: odd length"), on one printable line:
/// input it quotes has its control characters escaped (`PrintableText`), so it can be printed as it stands.
public struct InputError: DetailedError, Hashable, Sendable {
    /// The stable reason codes of every record-level validation failure.
    public enum Code: String, Sendable, CaseIterable {
        // Device tokens.
        case tokenMissing = "TokenMissing"
        case tokenEmpty = "TokenEmpty"
        case tokenNotHex = "TokenNotHex"
        case tokenOddLength = "TokenOddLength"
        case tokenTooShort = "TokenTooShort"
        case tokenTooLong = "TokenTooLong"
        // Headers.
        case topicMissing = "TopicMissing"
        case topicInvalid = "TopicInvalid"
        case topicSuffixMissing = "TopicSuffixMissing"
        case pushTypeUnknown = "PushTypeUnknown"
        case priorityInvalid = "PriorityInvalid"
        case priorityForbiddenForBackground = "PriorityForbiddenForContentAvailableOnly"
        case expirationInvalid = "ExpirationInvalid"
        case collapseIDInvalid = "CollapseIdInvalid"
        case collapseIDTooLong = "CollapseIdTooLong"
        case apnsIDInvalid = "ApnsIdInvalid"
        // Credentials: several provider keys, none for the record's topic (`TopicKeyRoutes`).
        case topicNotCovered = "TopicNotCovered"
        // Payloads.
        case payloadMissing = "PayloadMissing"
        case payloadEmpty = "PayloadEmpty"
        case payloadNotObject = "PayloadNotObject"
        case payloadInvalidJSON = "PayloadInvalidJson"
        case payloadTooLarge = "PayloadTooLarge"
        // Live Activity payloads (push type liveactivity; docs/APNS.md, "Live Activity payloads").
        case liveActivityTimestampMissing = "LiveActivityTimestampMissing"
        case liveActivityTimestampInvalid = "LiveActivityTimestampInvalid"
        case liveActivityEventMissing = "LiveActivityEventMissing"
        case liveActivityEventInvalid = "LiveActivityEventInvalid"
        case liveActivityContentStateMissing = "LiveActivityContentStateMissing"
        case liveActivityContentStateInvalid = "LiveActivityContentStateInvalid"
        case liveActivityAttributesTypeMissing = "LiveActivityAttributesTypeMissing"
        case liveActivityAttributesTypeInvalid = "LiveActivityAttributesTypeInvalid"
        case liveActivityAttributesMissing = "LiveActivityAttributesMissing"
        case liveActivityAttributesInvalid = "LiveActivityAttributesInvalid"
        case liveActivityStaleDateInvalid = "LiveActivityStaleDateInvalid"
        case liveActivityDismissalDateInvalid = "LiveActivityDismissalDateInvalid"
        // Records as read from files.
        case recordInvalidJSON = "RecordInvalidJson"
        case recordNotObject = "RecordNotObject"
        case recordFieldInvalid = "RecordFieldInvalid"
        case recordInvalidUTF8 = "RecordInvalidUtf8"
        case recordTooLong = "RecordTooLong"
        case csvMalformed = "CsvMalformed"
        case csvColumnCount = "CsvColumnCount"
        case templateVariableMissing = "TemplateVariableMissing"
        case templateResultInvalid = "TemplateResultInvalid"
        /// A CSV cell for a placeholder outside quotes is empty or not a JSON number, `true`, `false` or `null`.
        case templateValueInvalid = "TemplateValueInvalid"
    }

    /// What is wrong with the record, as a stable code.
    public let code: Code
    /// The specifics: the field and the offending value.
    public let detail: String

    /// An error of `code` with `detail`.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = PrintableText.escaping(detail)
    }

    /// The code's text, as written in result lines.
    public var summary: String { code.rawValue }
}
