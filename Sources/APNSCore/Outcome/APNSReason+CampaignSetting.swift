extension APNSReason {
    /// The rejections a wrong topic causes for every record of it (`BadTopic`, `TopicDisallowed`, `MissingTopic`):
    /// sending again with another `--topic` fixes them.
    public static let wrongTopicReasons: Set<String> = Set(
        [APNSReason.badTopic, .topicDisallowed, .missingTopic].map(\.rawValue))

    /// The rejection a wrong push type causes for every record of it (`InvalidPushType`): sending again with another
    /// `--push-type` fixes it.
    public static let wrongPushTypeReasons: Set<String> = [APNSReason.invalidPushType.rawValue]

    /// The rejections of a campaign-wide setting, topic or push type: the `input_error` lines a stopped campaign's
    /// continuation or a fixing replay sends again.
    public static let campaignSettingReasons: Set<String> = wrongTopicReasons.union(wrongPushTypeReasons)
}
