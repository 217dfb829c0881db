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
            // A status APNs never sends is the server's failure, not the record's, whatever reason comes with it
            // (a 999 with "BadDeviceToken" must not prune a token): 5xx is retried, anything else is in doubt.
            guard isAPNSStatus(answer.status) else {
                return (500..<600).contains(answer.status) ? .retry(.afterBackoff) : .inDoubt
            }
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

    /// Whether APNs answers with `status` (docs/APNS.md). A switch, not a set: asked once an answer, where hashing
    /// into a set cost more than the rest of the decision.
    static func isAPNSStatus(_ status: Int) -> Bool {
        switch status {
        case 200, 400, 403, 404, 405, 410, 413, 429, 500, 503: return true
        default: return false
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

// MARK: - SendAction

/// What a bulk sender does after one push outcome: the single vocabulary every part of the sender acts on.
public enum SendAction: Hashable, Sendable {
    /// How a retry should be made.
    public enum Retry: Hashable, Sendable {
        /// Not processed by APNs: send again at once (refused stream, above a GOAWAY, never sent).
        case immediately
        /// Send again after a back-off with jitter (429, 500, 503 ServiceUnavailable and Shutdown).
        case afterBackoff
        /// Answered, but for a reason of the connection rather than the request (IdleTimeout): send again at
        /// once, as a counted attempt, on whichever connection is ready (the server closes the idle one).
        case atOnce
        /// The provider token expired: re-sign it (at once, once per token), then send again.
        case afterResigningToken
    }

    /// Why a campaign must stop.
    public enum StopCause: Hashable, Sendable {
        /// The credentials are wrong for every request (InvalidProviderToken, BadCertificate, …).
        case credentials
        /// The sender builds requests APNs cannot route (BadPath, MethodNotAllowed): a bug.
        case senderBug
    }

    /// APNs accepted the notification.
    case delivered
    /// The token is dead or not for this app: flag it for pruning, never retry.
    case prune
    /// The request itself is wrong: never retried. `campaignWide` marks reasons that, seen repeatedly, show the
    /// campaign's settings are wrong (BadTopic, TopicDisallowed, …) rather than one record.
    case reject(campaignWide: Bool)
    /// Try again, as described.
    case retry(Retry)
    /// Stop the whole campaign: sending more would fail the same way.
    case stop(StopCause)
    /// The request may or may not have reached APNs: report it, do not re-send it silently.
    case inDoubt
}
