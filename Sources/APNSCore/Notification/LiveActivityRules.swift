/// The fields ActivityKit needs in the `aps` of a `liveactivity` payload (docs/APNS.md, "Live Activity
/// payloads"): `timestamp` (integer seconds) and `event` (`start`, `update` or `end`); `content-state` (an
/// object) for `start` and `update`; `attributes-type` (a string) and `attributes` (an object) for `start`;
/// `stale-date` and `dismissal-date`, when present, integer seconds. The first field that breaks a rule is the
/// error, checked in that order.
public enum LiveActivityRules {
    /// The `aps` members the rules look at, as found in a scanned payload object (nil when absent or `null`).
    struct Fields {
        var timestamp: JSONScanner.Value?
        var event: JSONScanner.Value?
        var contentState: JSONScanner.Value?
        var attributesType: JSONScanner.Value?
        var attributes: JSONScanner.Value?
        var staleDate: JSONScanner.Value?
        var dismissalDate: JSONScanner.Value?
    }

    /// Checks a payload already scanned as a JSON object (`payload`) for push type `liveactivity`.
    public static func validate(_ scanner: JSONScanner, payload: JSONScanner.Value) throws(InputError) {
        var aps: JSONScanner.Value?
        scanner.forEachMember(of: payload) { key, value in
            if scanner.string(key, equals: "aps") { aps = value }
        }
        guard let aps, aps.kind == .object else {
            throw InputError(
                .liveActivityTimestampMissing,
                "push type liveactivity needs an 'aps' object with 'aps.timestamp' (seconds)"
            )
        }
        var fields = Fields()
        scanner.forEachMember(of: aps) { key, value in
            let present: JSONScanner.Value? = value.kind == .null ? nil : value
            if scanner.string(key, equals: "timestamp") {
                fields.timestamp = present
            } else if scanner.string(key, equals: "event") {
                fields.event = present
            } else if scanner.string(key, equals: "content-state") {
                fields.contentState = present
            } else if scanner.string(key, equals: "attributes-type") {
                fields.attributesType = present
            } else if scanner.string(key, equals: "attributes") {
                fields.attributes = present
            } else if scanner.string(key, equals: "stale-date") {
                fields.staleDate = present
            } else if scanner.string(key, equals: "dismissal-date") {
                fields.dismissalDate = present
            }
        }
        try check(fields, in: scanner)
    }

    private static func check(_ fields: Fields, in scanner: JSONScanner) throws(InputError) {
        guard let timestamp = fields.timestamp else {
            throw InputError(.liveActivityTimestampMissing, "push type liveactivity needs 'aps.timestamp' (seconds)")
        }
        guard isSeconds(timestamp, in: scanner) else {
            throw InputError(.liveActivityTimestampInvalid, "'aps.timestamp' must be an integer number of seconds")
        }
        guard let eventValue = fields.event else {
            throw InputError(
                .liveActivityEventMissing, "push type liveactivity needs 'aps.event' (start, update or end)")
        }
        let event: Event
        if scanner.string(eventValue, equals: "start") {
            event = .start
        } else if scanner.string(eventValue, equals: "update") {
            event = .update
        } else if scanner.string(eventValue, equals: "end") {
            event = .end
        } else {
            throw InputError(.liveActivityEventInvalid, "'aps.event' must be \"start\", \"update\" or \"end\"")
        }
        if event != .end {
            guard let state = fields.contentState else {
                throw InputError(
                    .liveActivityContentStateMissing, "event \(event) needs 'aps.content-state' (an object)")
            }
            guard state.kind == .object else {
                throw InputError(.liveActivityContentStateInvalid, "'aps.content-state' must be a JSON object")
            }
        } else if let state = fields.contentState, state.kind != .object {
            throw InputError(.liveActivityContentStateInvalid, "'aps.content-state' must be a JSON object")
        }
        if event == .start {
            guard let type = fields.attributesType else {
                throw InputError(
                    .liveActivityAttributesTypeMissing, "event start needs 'aps.attributes-type' (a string)")
            }
            guard type.kind == .string, type.range.count > 2 else {
                throw InputError(.liveActivityAttributesTypeInvalid, "'aps.attributes-type' must be a non-empty string")
            }
            guard let attributes = fields.attributes else {
                throw InputError(.liveActivityAttributesMissing, "event start needs 'aps.attributes' (an object)")
            }
            guard attributes.kind == .object else {
                throw InputError(.liveActivityAttributesInvalid, "'aps.attributes' must be a JSON object")
            }
        }
        if let stale = fields.staleDate, !isSeconds(stale, in: scanner) {
            throw InputError(.liveActivityStaleDateInvalid, "'aps.stale-date' must be an integer number of seconds")
        }
        if let dismissal = fields.dismissalDate, !isSeconds(dismissal, in: scanner) {
            throw InputError(
                .liveActivityDismissalDateInvalid, "'aps.dismissal-date' must be an integer number of seconds")
        }
    }

    private enum Event: String, CustomStringConvertible {
        case start, update, end
        var description: String { rawValue }
    }

    /// A JSON number written as digits only: a non-negative integer (no sign, fraction or exponent).
    private static func isSeconds(_ value: JSONScanner.Value, in scanner: JSONScanner) -> Bool {
        guard value.kind == .number else { return false }
        return scanner.bytes[value.range].allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
