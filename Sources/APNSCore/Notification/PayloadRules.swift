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
        let size = range.count
        let nonSpace = scanner.skipSpace(range.lowerBound, range.upperBound) < range.upperBound
        guard size > 0, nonSpace else { throw InputError(.payloadEmpty, "payload is empty") }
        let limit = pushType.maximumPayloadBytes
        guard size <= limit else {
            throw InputError(.payloadTooLarge, "payload is \(size) bytes: more than \(limit) for push type \(pushType.rawValue)")
        }
        let value: JSONScanner.Value
        do {
            value = try scanner.scanDocument(in: range)
        } catch {
            throw InputError(.payloadInvalidJSON, "payload is not valid JSON: \(error)")
        }
        guard value.kind == .object else {
            throw InputError(.payloadNotObject, "payload must be a JSON object, not \(value.kind)")
        }
        if (priority ?? .immediate) == .immediate, isContentAvailableOnly(scanner, object: value) {
            throw InputError(
                .priorityForbiddenForBackground,
                "priority 10 is not allowed for a payload whose aps holds only content-available: use priority 5"
            )
        }
        return value
    }

    /// Validates a whole byte array as a payload.
    @discardableResult
    public static func validate(_ bytes: [UInt8], pushType: PushType, priority: Priority?) throws(InputError) -> JSONScanner.Value {
        try validate(JSONScanner(bytes), range: 0..<bytes.count, pushType: pushType, priority: priority)
    }

    /// Whether the payload's `aps` dictionary holds `content-available` and nothing else.
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
