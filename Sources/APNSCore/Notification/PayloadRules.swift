/// The rules APNs applies to a notification payload: a JSON object, within the push type's size limit, and not a
/// content-available-only payload at priority 10; for push type `liveactivity`, the fields ActivityKit needs
/// (`LiveActivityRules`). Payload bytes are validated as they stand, never re-serialised.
public enum PayloadRules {
    /// Validates payload bytes for a push type and the priority that will be sent (nil means APNs's default, 10).
    /// `liveActivityFields: false` leaves `LiveActivityRules` out (the mock: APNs documents no answer for them).
    ///
    /// - Returns: the scanned top-level object, so callers can look further without scanning again.
    @discardableResult
    public static func validate(
        _ scanner: JSONScanner,
        range: Range<Int>,
        pushType: PushType,
        priority: Priority?,
        liveActivityFields: Bool = true
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
        if pushType == .liveactivity, liveActivityFields { try LiveActivityRules.validate(scanner, payload: value) }
        return value
    }

    /// Validates a payload already scanned as a JSON object (a record's `payload` member, checked by the scan of
    /// its line, `object` in `scanner`): the same rules in the same order as `validate`, given whether its `aps`
    /// holds only `content-available` (`isContentAvailableOnly`).
    public static func validate(
        scannedObject object: JSONScanner.Value, in scanner: JSONScanner, contentAvailableOnly: Bool,
        pushType: PushType, priority: Priority?
    ) throws(InputError) {
        try validateSize(object.range.count, pushType: pushType)
        try validatePriority(priority, contentAvailableOnly: contentAvailableOnly)
        if pushType == .liveactivity { try LiveActivityRules.validate(scanner, payload: object) }
    }

    private static func validateSize(_ size: Int, pushType: PushType) throws(InputError) {
        let limit = pushType.maximumPayloadBytes
        guard size <= limit else {
            throw InputError(
                .payloadTooLarge, "payload is \(size) bytes: more than \(limit) for push type \(pushType.rawValue)")
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
    public static func validate(_ bytes: [UInt8], pushType: PushType, priority: Priority?) throws(InputError)
        -> JSONScanner.Value
    {
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

// MARK: - ContentAvailableOnlyCheck

/// Answers `PayloadRules.isContentAvailableOnly` (does the payload's `aps` object hold `content-available` and
/// nothing else?) from the members a `JSONScanner` scan reports, so the payload is not scanned a second time.
///
/// Feed it every member the scan reports down to `reportedDepth`, in order. Members of the payload object come at
/// `payloadDepth` (1 when the payload is the scanned document, 2 when it is a member of a record), the members of
/// its `aps` one deeper and before `aps` itself. A member shallower than `payloadDepth` (a record's own member)
/// closes the payload before it: read `isContentAvailableOnly` before passing the record's `payload` member.
public struct ContentAvailableOnlyCheck: Sendable, JSONMemberVisitor {
    /// The depth of the payload object's own members in the scan.
    public let payloadDepth: Int
    /// The answer for the payload whose members were reported so far: its last `aps` member decides.
    public private(set) var isContentAvailableOnly = false
    /// Members seen since the last member at `payloadDepth`: those of the object it holds, if any.
    private var nestedMembers = 0
    private var nestedContentAvailable = false

    /// `JSONScanner.word(_:)` of `aps`, so the key at the payload's depth is matched in one comparison.
    static let apsWord: UInt64 = 0x73_7061

    /// A checker for a payload nested up to `payloadDepth` levels.
    public init(payloadDepth: Int) {
        self.payloadDepth = payloadDepth
    }

    /// The deepest members the scan must report: those of `aps`.
    public var reportedDepth: Int { payloadDepth + 1 }

    /// Checks one object member met at `depth` while scanning the payload.
    public mutating func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner) {
        if depth > payloadDepth {
            nestedMembers += 1
            if scanner.string(key, equals: "content-available") { nestedContentAvailable = true }
            return
        }
        if depth < payloadDepth {
            isContentAvailableOnly = false
        } else if scanner.shortWord(key) == Self.apsWord || key.hasEscapes && scanner.string(key, equals: "aps") {
            // The members counted since the previous member at this depth are exactly those of this value, if
            // it is an object: deeper objects' members are not reported, and objects in arrays are deeper still.
            isContentAvailableOnly = value.kind == .object && nestedMembers == 1 && nestedContentAvailable
        }
        nestedMembers = 0
        nestedContentAvailable = false
    }
}
