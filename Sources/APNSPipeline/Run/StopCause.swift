import APNSCore

/// What kind of campaign-wide cause stopped a campaign, read from the stop's reason (its first word is the APNs
/// reason, as `CampaignHealth` and `TokenRejectionCheck` write it), and so which settings a person may change to
/// continue it: the topic for a topic stop, the push type for a push-type stop. Credentials, the endpoint, the CA,
/// pins and the proxy are never part of a campaign's identity, so fixing those needs no allowance.
public enum StopCause: String, Sendable, Equatable, CaseIterable {
    /// The provider token or certificate was refused.
    case credentials
    /// Every token of a topic was called bad, none accepted: the endpoint's environment does not match the tokens.
    case environment
    /// The topic was refused, or every token was another app's.
    case topic
    /// The push type was refused.
    case pushType = "push type"
    /// The transport could not work (TLS, HTTP/2, connections failing), or another cause.
    case transport

    /// The cause of a stop reason.
    public init(reason: String) {
        let word = reason.prefix { $0 != " " && $0 != ":" }
        switch APNSReason(rawValue: String(word)) {
        case .invalidProviderToken, .missingProviderToken, .badCertificate, .badCertificateEnvironment, .forbidden,
             .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken, .expiredProviderToken:
            self = .credentials
        case .badDeviceToken:
            self = .environment
        case .badTopic, .topicDisallowed, .missingTopic, .deviceTokenNotForTopic:
            self = .topic
        case .invalidPushType:
            self = .pushType
        default:
            self = .transport
        }
    }

    /// The campaign settings (`CampaignIdentity.settings` names) that may change when this stop is continued.
    public var settingsItFixes: Set<String> {
        switch self {
        case .topic: return ["--topic"]
        case .pushType: return ["--push-type"]
        case .credentials, .environment, .transport: return []
        }
    }
}
