/// An APNs answer as read off the wire: the status, the ids it carries and the parsed error body. Immutable, as
/// `PushNotification` is, so that building one copies nothing.
public struct PushAnswer: Sendable, Hashable {
    public let status: Int
    public let apnsID: String?
    /// Sent by the development environment only.
    public let apnsUniqueID: String?
    public let reason: APNSReason?
    /// For 410: milliseconds since the epoch at which APNs last confirmed the token was invalid.
    public let timestamp: Int64?

    public init(status: Int, apnsID: String? = nil, apnsUniqueID: String? = nil, reason: APNSReason? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.reason = reason
        self.timestamp = timestamp
    }

    /// An answer with its error body parsed by `APNSErrorBody`.
    public init(status: Int, apnsID: String?, apnsUniqueID: String?, body: some Collection<UInt8>) {
        let parsed = APNSErrorBody(parsing: body)
        self.init(status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID, reason: parsed.reason, timestamp: parsed.timestamp)
    }
}
