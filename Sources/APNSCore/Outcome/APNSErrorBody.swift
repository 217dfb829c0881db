/// The parsed APNs error body (`{"reason":"…","timestamp":…}`), as it comes in a response or in a GOAWAY's debug
/// data (`docs/APNS.md`, "Responses"). The one place that reads it.
public struct APNSErrorBody: Sendable, Hashable {
    public var reason: APNSReason?
    /// For 410: milliseconds since the epoch at which APNs last confirmed the token was invalid.
    public var timestamp: Int64?

    public init(reason: APNSReason? = nil, timestamp: Int64? = nil) {
        self.reason = reason
        self.timestamp = timestamp
    }

    /// Reads `reason` and `timestamp`; a body that is empty or not such JSON leaves them nil.
    public init<Bytes: Collection<UInt8>>(parsing bytes: Bytes) {
        self.init()
        guard !bytes.isEmpty else { return }
        let body = Array(bytes)
        let scanner = JSONScanner(body)
        guard let object = try? scanner.scanDocument(in: 0..<body.count), object.kind == .object else { return }
        scanner.forEachMember(of: object) { key, value in
            if scanner.string(key, equals: "reason"), value.kind == .string {
                reason = APNSReason(rawValue: scanner.decodeString(value))
            } else if scanner.string(key, equals: "timestamp"), value.kind == .number {
                timestamp = Int64(String(decoding: body[value.range], as: UTF8.self))
            }
        }
    }
}
