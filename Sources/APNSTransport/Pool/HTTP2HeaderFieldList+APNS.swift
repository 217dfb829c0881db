import APNSCore
import APNSHTTP2

/// APNs request headers in the two halves the client session takes: the shared block built once per campaign and
/// credential, and the per-request fields refilled for every notification.
extension HTTP2HeaderBlock {
    /// The fields every push to `endpoint` shares: `:method POST`, `:scheme https`, `:authority`, then
    /// `authorization: bearer <jwt>` (token-based trust; nil with a client certificate), and `apns-topic` /
    /// `apns-push-type` when the whole campaign uses one topic and push type (then leave them out of the
    /// per-request fields). Build a new block when the provider token is re-signed.
    public static func apnsRequests(
        endpoint: APNSEndpoint, providerToken: String?, topic: Topic? = nil, pushType: PushType? = nil
    ) throws(HTTP2Error) -> HTTP2HeaderBlock {
        var fields: [(name: String, value: String)] = []
        if let providerToken { fields.append(("authorization", "bearer " + providerToken)) }
        if let topic { fields.append(("apns-topic", topic.value)) }
        if let pushType { fields.append(("apns-push-type", pushType.rawValue)) }
        return try HTTP2HeaderBlock(authority: endpoint.authority, fields: fields)
    }
}

extension HTTP2HeaderFieldList {
    /// The `:path` before the device token.
    static var devicePathPrefix: StaticString { "/3/device/" }

    /// Replaces the list with one notification's per-request fields: `:path /3/device/<token>`, then `apns-id`,
    /// `apns-expiration`, `apns-priority` and `apns-collapse-id` when set, and `apns-topic` / `apns-push-type`
    /// unless the shared block carries them. Allocates nothing once the list has grown.
    public mutating func setAPNSRequestFields(for notification: PushNotification, topicAndPushTypeInBlock: Bool) {
        // The commonest request has nothing but its `:path`, like the one before: overwrite the token in place
        // when it is as long as the last one (a list of one field here is always that `:path`).
        let pathOnly = topicAndPushTypeInBlock && notification.apnsID == nil && notification.expiration == nil
            && notification.priority == nil && notification.collapseID == nil
        if pathOnly, count == 1, nameCount(at: 0) == 5,
           replaceValueTail(ofField: 0, from: Self.devicePathPrefix.utf8CodeUnitCount, with: notification.token.hex) {
            return
        }
        removeAll()
        append(name: ":path", prefix: Self.devicePathPrefix, value: notification.token.hex)
        if !topicAndPushTypeInBlock {
            append(name: "apns-topic", value: notification.topic.value, indexable: true)
            append(name: "apns-push-type", value: notification.pushType.rawValue, indexable: true)
        }
        if let apnsID = notification.apnsID { append(name: "apns-id", value: apnsID.bytes) }
        if let expiration = notification.expiration { append(name: "apns-expiration", decimal: expiration.epochSeconds) }
        if let priority = notification.priority {
            append(name: "apns-priority", decimal: Int64(priority.rawValue), indexable: true)
        }
        if let collapseID = notification.collapseID { append(name: "apns-collapse-id", value: collapseID.value) }
    }
}
