import APNSCore

/// The campaign-wide settings from the command line that every record uses unless it gives its own value.
///
/// `topic` is the app's bundle id (or a full topic): a record without a topic gets it with the suffix its push
/// type needs appended (`com.example.app` + `voip` → `com.example.app.voip`; a topic that already ends in the
/// suffix is kept). A record without a priority gets `priority`, or else `PushNotification.defaultPriority(for:)`
/// (5 for background pushes, otherwise no header, which APNs reads as 10).
public struct CampaignDefaults: Sendable, Hashable {
    public var topic: Topic?
    public var pushType: PushType
    public var priority: Priority?
    public var expiration: ExpirationSetting?
    public var collapseID: CollapseID?

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
