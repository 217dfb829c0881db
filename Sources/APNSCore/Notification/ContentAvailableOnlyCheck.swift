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

    public init(payloadDepth: Int) {
        self.payloadDepth = payloadDepth
    }

    /// The deepest members the scan must report: those of `aps`.
    public var reportedDepth: Int { payloadDepth + 1 }

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
