/// One notification ready for the wire: the device token, every APNs header value, and the payload bytes as they
/// stood in the input (validated, never re-serialised). Immutable: with `var` fields the compiler copied each one
/// built in `init` and released the original (docs/PERFORMANCE.md, "What made it faster").
public struct PushNotification: Sendable, Hashable {
    public let token: DeviceToken
    public let topic: Topic
    // `expiration` before the two one-byte fields, which fill the padding after its nil flag: 80 bytes, not 88
    // (the dispatcher's `PendingSend` holds one and must fit in 128).
    public let expiration: Expiration?
    public let pushType: PushType
    /// nil leaves the header out (APNs then uses 10).
    public let priority: Priority?
    public let collapseID: CollapseID?
    public let apnsID: APNSID?
    public let payload: [UInt8]

    public init(
        token: DeviceToken,
        topic: Topic,
        pushType: PushType,
        priority: Priority? = nil,
        expiration: Expiration? = nil,
        collapseID: CollapseID? = nil,
        apnsID: APNSID? = nil,
        payload: [UInt8]
    ) {
        self.token = token
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// Checks the rules that join several fields: the topic's suffix for the push type, and the payload for the
    /// push type and priority.
    public func validate() throws(InputError) {
        try topic.validate(for: pushType)
        try PayloadRules.validate(payload, pushType: pushType, priority: priority)
    }

    /// The priority to send when a record names none: 5 for background pushes (APNs rejects 10 for
    /// content-available-only payloads), otherwise none (APNs's default, 10).
    public static func defaultPriority(for pushType: PushType) -> Priority? {
        pushType == .background ? .powerAware : nil
    }
}
