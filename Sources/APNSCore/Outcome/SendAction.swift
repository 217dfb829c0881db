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
