import APNSCore
import APNSHTTP2

/// The topic checks, after authentication: `MissingTopic`, `BadTopic`, `TopicDisallowed`, and `InvalidPushType`
/// for a topic whose suffix does not fit the push type.
///
/// A topic is a bundle id plus the suffix its push type requires (`PushType.topicSuffix`). The bundle id must be
/// allowed: for token auth, by `MockConfiguration.allowedBundleIDs(forTeam:)` (empty: any); for certificate auth,
/// by the certificate's topics (the topic itself, or its bundle id, must be one of them). Then the suffix must be
/// the one the push type requires; a topic carrying another push type's suffix (or none where one is required)
/// answers 400 `InvalidPushType`: the push type does not fit the topic. (Choice: APNs documents `BadTopic` only as
/// "the apns-topic is invalid"; `InvalidPushType` names the mismatch better, and `BadTopic` stays for topics that
/// are not a well-formed topic at all.) Without `apns-push-type`, the push type is inferred from the topic's suffix
/// (alert when it has none), as APNs did before the header existed.
extension MockValidator {
    /// The topic the request goes to and its push type, once checked.
    struct TopicCheck {
        let topic: [UInt8]
        let pushType: PushType
    }

    func checkTopic(
        _ request: MockRequest,
        _ shaped: ShapedRequest,
        authority: Authority,
        connection: inout MockConnectionState
    ) -> Result<TopicCheck, Rejection> {
        let list = request.fields
        var byToken = false
        if case .token = authority { byToken = true }
        // The campaign's topic again: compared in place, nothing copied.
        if let cached = connection.acceptedTopicPushType, connection.acceptedTopicByToken == byToken,
           let index = shaped.fields.topic, list.valueCount(at: index) > 0,
           list.value(at: index, equals: connection.acceptedTopic),
           shaped.fields.pushType.map({ list.value(at: $0, equals: connection.acceptedTopicPushTypeHeader) })
            ?? connection.acceptedTopicPushTypeHeader.isEmpty {
            return .success(TopicCheck(topic: connection.acceptedTopic, pushType: cached))
        }
        var topic: [UInt8] = []
        if let index = shaped.fields.topic { topic = Array(list.value(at: index)) }
        if topic.isEmpty {
            guard case .certificate(let topics) = authority, topics.count == 1, let only = topics.first else {
                return .failure(.init(.missingTopic))
            }
            topic = Array(only.utf8)
        }
        let pushTypeBytes = shaped.fields.pushType.map { Array(list.value(at: $0)) } ?? []
        // The same check on the topic in effect (a certificate's only topic stands in for a missing header).
        if let cached = connection.acceptedTopicPushType, connection.acceptedTopicByToken == byToken,
           connection.acceptedTopic == topic, connection.acceptedTopicPushTypeHeader == pushTypeBytes {
            return .success(TopicCheck(topic: topic, pushType: cached))
        }
        let text = String(decoding: topic, as: UTF8.self)
        guard (try? Topic(validating: text)) != nil else { return .failure(.init(.badTopic)) }
        let suffixType = Self.pushTypeBySuffix(of: text)
        let bundleID = suffixType.map { String(text.dropLast($0.topicSuffix?.utf8.count ?? 0)) } ?? text
        guard isAllowed(topic: text, bundleID: bundleID, authority: authority) else {
            return .failure(.init(.topicDisallowed))
        }
        let pushType = shaped.pushType ?? suffixType ?? .alert
        guard pushType.topicSuffix == suffixType?.topicSuffix else { return .failure(.init(.invalidPushType)) }
        connection.acceptedTopic = topic
        connection.acceptedTopicByToken = byToken
        connection.acceptedTopicPushTypeHeader = pushTypeBytes
        connection.acceptedTopicPushType = pushType
        return .success(TopicCheck(topic: topic, pushType: pushType))
    }

    private func isAllowed(topic: String, bundleID: String, authority: Authority) -> Bool {
        switch authority {
        case .certificate(let topics):
            return topics.contains(topic) || topics.contains(bundleID)
        case .token(let teamID):
            let allowed = configuration.allowedBundleIDs(forTeam: teamID)
            return allowed.isEmpty || allowed.contains(bundleID)
        }
    }

    /// The push type whose required suffix the topic ends with (after a non-empty bundle id), if any.
    static func pushTypeBySuffix(of topic: String) -> PushType? {
        for type in PushType.allCases {
            guard let suffix = type.topicSuffix else { continue }
            if topic.utf8.count > suffix.utf8.count, topic.hasSuffix(suffix) { return type }
        }
        return nil
    }
}
