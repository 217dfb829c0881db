import APNSCore

/// How the dispatcher paces, retries and stops a campaign.
public struct DispatcherConfiguration: Sendable {
    /// Back-off and tries in all for 429, 5xx and the like.
    public var retry: ExponentialBackoff = .requests
    /// How often one record may be resent because the server never processed it (refused stream, above a
    /// GOAWAY, connection not up) before it ends `retryable`.
    public var maximumUnprocessedResends = 20
    /// Send later copies of a (token, topic) pair instead of reporting them as duplicates.
    public var allowDuplicates = false
    /// Resend requests whose answer was lost (they may then arrive twice) instead of reporting them in doubt.
    public var resendInDoubt = false
    /// Campaign-level failures in a row (same reason) that stop the campaign.
    public var stopAfterConsecutiveFailures = 5
    /// Requests started per second at most; nil for as fast as APNs takes them.
    public var ratePerSecond: Double?
    /// After a stop, how long to wait for answers to requests in flight before reporting them in doubt.
    public var drainGracePeriod: Double = 15
    /// Records read per loop turn at most, so a long run of invalid records cannot starve the network.
    public var maximumRecordsPerTurn = 4096
    /// How the in-flight window (requests in flight across all connections) starts, grows and is capped;
    /// `window.maximum` is `--max-in-flight`.
    public var window = InFlightWindow.Settings()

    public init() {}
}
