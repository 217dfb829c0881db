/// An APNs answer as read off the wire: the status, the ids it carries and the parsed error body.
public struct PushAnswer: Sendable, Hashable {
    public var status: Int
    public var apnsID: String?
    /// Sent by the development environment only.
    public var apnsUniqueID: String?
    public var reason: APNSReason?
    /// For 410: milliseconds since the epoch at which APNs last confirmed the token was invalid.
    public var timestamp: Int64?

    public init(status: Int, apnsID: String? = nil, apnsUniqueID: String? = nil, reason: APNSReason? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.reason = reason
        self.timestamp = timestamp
    }

    /// Reads `reason` and `timestamp` from an APNs error body (`{"reason":"…","timestamp":…}`); a body that is
    /// empty or not such JSON leaves them nil.
    public init(status: Int, apnsID: String?, apnsUniqueID: String?, body: [UInt8]) {
        self.init(status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID)
        guard !body.isEmpty else { return }
        let scanner = JSONScanner(body)
        guard let object = try? scanner.scanDocument(in: 0..<body.count), object.kind == .object else { return }
        var reason: APNSReason?
        var timestamp: Int64?
        scanner.forEachMember(of: object) { key, value in
            if scanner.string(key, equals: "reason"), value.kind == .string {
                reason = APNSReason(rawValue: scanner.decodeString(value))
            } else if scanner.string(key, equals: "timestamp"), value.kind == .number {
                timestamp = Int64(String(decoding: body[value.range], as: UTF8.self))
            }
        }
        self.reason = reason
        self.timestamp = timestamp
    }

    /// The outcome this answer stands for.
    public var outcome: PushOutcome { .answered(status: status, reason: reason, timestamp: timestamp) }
}
