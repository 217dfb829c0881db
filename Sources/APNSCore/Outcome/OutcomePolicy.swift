/// The one place that decides what each push outcome means for a bulk sender (the table in `docs/APNS.md`).
public enum OutcomePolicy {
    /// Maps an outcome (APNs status and reason, or a transport failure) to what the sender does.
    ///
    /// A known reason decides on its own; an unknown or missing reason falls back on the status class.
    public static func action(for outcome: PushOutcome) -> SendAction {
        switch outcome {
        case .failed(let failure):
            return action(for: failure)
        case .answered(let answer):
            if answer.status == 200 { return .delivered }
            if let reason = answer.reason, let action = action(forKnown: reason) { return action }
            return action(forStatus: answer.status)
        }
    }

    private static func action(for failure: TransportFailure) -> SendAction {
        switch failure {
        case .refusedStream, .unprocessedAfterGoaway, .notSent: return .retry(.immediately)
        case .answerLost: return .inDoubt
        }
    }

    private static func action(forKnown reason: APNSReason) -> SendAction? {
        switch reason {
        case .badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken:
            return .prune
        case .badTopic, .topicDisallowed, .missingTopic, .invalidPushType, .badPriority, .badExpirationDate,
             .duplicateHeaders, .missingDeviceToken:
            return .reject(campaignWide: true)
        case .badCollapseID, .badMessageID, .payloadEmpty, .payloadTooLarge:
            return .reject(campaignWide: false)
        case .idleTimeout:
            return .retry(.atOnce)
        case .expiredProviderToken:
            return .retry(.afterResigningToken)
        case .invalidProviderToken, .missingProviderToken, .badCertificate, .badCertificateEnvironment, .forbidden,
             .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken:
            return .stop(.credentials)
        case .badPath, .methodNotAllowed:
            return .stop(.senderBug)
        case .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown:
            return .retry(.afterBackoff)
        case .tooManyProviderTokenUpdates:
            // The token in use is still valid; APNs objects to how often it changed. Waiting fixes it.
            return .retry(.afterBackoff)
        case .unknown:
            return nil
        }
    }

    private static func action(forStatus status: Int) -> SendAction {
        switch status {
        case 200..<300: return .delivered
        case 403: return .stop(.credentials)
        case 404, 405: return .stop(.senderBug)
        case 410: return .prune
        case 429, 500..<600: return .retry(.afterBackoff)
        default: return .reject(campaignWide: true)
        }
    }
}
