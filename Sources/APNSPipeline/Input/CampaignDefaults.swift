import APNSCore

/// The campaign-wide settings from the command line that every record uses unless it gives its own value.
///
/// `topic` is the app's bundle id (or a full topic): a record without a topic gets it with the suffix its push
/// type needs appended (`com.example.app` + `voip` → `com.example.app.voip`; a topic that already ends in the
/// suffix is kept). A record without a priority gets `priority`, or else `PushNotification.defaultPriority(for:)`
/// (5 for background pushes, otherwise no header, which APNs reads as 10).
public struct CampaignDefaults: Sendable, Hashable {
    /// The topic for records that name none; nil when every record must.
    public var topic: Topic?
    /// The push type for records that name none.
    public var pushType: PushType
    /// The priority for records that name none; nil sends none.
    public var priority: Priority?
    /// The expiration for records that name none; nil sends none.
    public var expiration: ExpirationSetting?
    /// The collapse id for records that name none; nil sends none.
    public var collapseID: CollapseID?

    /// Defaults from their parts.
    public init(
        topic: Topic? = nil,
        pushType: PushType = .alert,
        priority: Priority? = nil,
        expiration: ExpirationSetting? = nil,
        collapseID: CollapseID? = nil
    ) {
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
    }

    /// The topic for a record that names none: the default topic with `pushType`'s suffix.
    public func topic(for pushType: PushType) throws(InputError) -> Topic {
        guard let topic else {
            throw InputError(.topicMissing, "record has no topic and no default topic is set (--topic)")
        }
        return try Topic.derived(bundleID: topic.value, pushType: pushType)
    }

    /// The priority for a record that names none.
    public func priority(for pushType: PushType) -> Priority? {
        priority ?? PushNotification.defaultPriority(for: pushType)
    }
}
