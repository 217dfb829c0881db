/// The rules APNs applies to a notification payload: a JSON object, within the push type's size limit, and not a
/// content-available-only payload at priority 10. Payload bytes are validated as they stand, never re-serialised.
public enum PayloadRules {
    /// Validates payload bytes for a push type and the priority that will be sent (nil means APNs's default, 10).
    ///
    /// - Returns: the scanned top-level object, so callers can look further without scanning again.
    @discardableResult
    public static func validate(
        _ scanner: JSONScanner,
        range: Range<Int>,
        pushType: PushType,
        priority: Priority?
    ) throws(InputError) -> JSONScanner.Value {
        let nonSpace = scanner.skipSpace(range.lowerBound, range.upperBound) < range.upperBound
        guard !range.isEmpty, nonSpace else { throw InputError(.payloadEmpty, "payload is empty") }
        try validateSize(range.count, pushType: pushType)
        let value: JSONScanner.Value
        var check = ContentAvailableOnlyCheck(payloadDepth: 1)
        do {
            value = try scanner.scanDocument(in: range, reportingMembersTo: check.reportedDepth, to: &check)
        } catch {
            throw InputError(.payloadInvalidJSON, "payload is not valid JSON: \(error)")
        }
        guard value.kind == .object else {
            throw InputError(.payloadNotObject, "payload must be a JSON object, not \(value.kind)")
        }
        try validatePriority(priority, contentAvailableOnly: check.isContentAvailableOnly)
        return value
    }

    /// Validates a payload already scanned as a JSON object (a record's `payload` member, checked by the scan of
    /// its line): the same rules in the same order as `validate`, given the object's size in bytes and whether its
    /// `aps` holds only `content-available` (`isContentAvailableOnly`).
    public static func validate(
        scannedObjectOfSize size: Int, contentAvailableOnly: Bool, pushType: PushType, priority: Priority?
    ) throws(InputError) {
        try validateSize(size, pushType: pushType)
        try validatePriority(priority, contentAvailableOnly: contentAvailableOnly)
    }

    private static func validateSize(_ size: Int, pushType: PushType) throws(InputError) {
        let limit = pushType.maximumPayloadBytes
        guard size <= limit else {
            throw InputError(.payloadTooLarge, "payload is \(size) bytes: more than \(limit) for push type \(pushType.rawValue)")
        }
    }

    private static func validatePriority(_ priority: Priority?, contentAvailableOnly: Bool) throws(InputError) {
        if (priority ?? .immediate) == .immediate, contentAvailableOnly {
            throw InputError(
                .priorityForbiddenForBackground,
                "priority 10 is not allowed for a payload whose aps holds only content-available: use priority 5"
            )
        }
    }

    /// Validates a whole byte array as a payload.
    @discardableResult
    public static func validate(_ bytes: [UInt8], pushType: PushType, priority: Priority?) throws(InputError) -> JSONScanner.Value {
        try validate(JSONScanner(bytes), range: 0..<bytes.count, pushType: pushType, priority: priority)
    }

    /// Whether the payload's `aps` dictionary holds `content-available` and nothing else, looked up in an object
    /// already scanned (`ContentAvailableOnlyCheck` gives the same answer during the scan).
    public static func isContentAvailableOnly(_ scanner: JSONScanner, object: JSONScanner.Value) -> Bool {
        var aps: JSONScanner.Value?
        scanner.forEachMember(of: object) { key, value in
            if scanner.string(key, equals: "aps") { aps = value }
        }
        guard let aps, aps.kind == .object else { return false }
        var keys = 0
        var contentAvailable = false
        scanner.forEachMember(of: aps) { key, _ in
            keys += 1
            if scanner.string(key, equals: "content-available") { contentAvailable = true }
        }
        return keys == 1 && contentAvailable
    }
}
