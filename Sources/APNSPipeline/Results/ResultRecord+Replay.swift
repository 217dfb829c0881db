import APNSCore

extension ResultRecord {
    /// The notification to send again (`replay`), rebuilt from the line alone and validated like a campaign
    /// record. The apns-id is reused when the line has one, so a replayed push keeps its identity; one that is not
    /// a UUID is an input error, never silently replaced.
    public func replayNotification() throws(InputError) -> PushNotification {
        guard let token else { throw InputError(.tokenMissing, "result line has no token") }
        guard let topic else { throw InputError(.topicMissing, "result line has no topic") }
        guard let payload else {
            throw InputError(.payloadMissing, "result line has no payload (only lines of records not delivered carry one)")
        }
        let notification = PushNotification(
            token: try DeviceToken(parsing: token),
            topic: try Topic(validating: topic),
            pushType: pushType ?? .alert,
            priority: priority,
            expiration: try expiration.map { value throws(InputError) in try Expiration(epochSeconds: value) },
            collapseID: try collapseID.map { value throws(InputError) in try CollapseID(validating: value) },
            apnsID: try apnsID.map { value throws(InputError) in try APNSID(parsing: value) },
            payload: payload
        )
        try notification.validate()
        return notification
    }
}
