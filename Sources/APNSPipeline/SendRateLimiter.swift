/// A token bucket that caps how many requests start per second (`--rate`), with a burst of a tenth of a second's
/// worth so the cap is smooth rather than once-a-second bursts.
public struct SendRateLimiter: Sendable {
    public let perSecond: Double
    private let burst: Double
    private var tokens: Double
    private var last: Double?

    /// - Parameter perSecond: requests per second; must be positive.
    public init(perSecond: Double) {
        self.perSecond = perSecond
        self.burst = max(1, perSecond / 10)
        self.tokens = max(1, perSecond / 10)
    }

    /// How many requests may start at `now` (monotonic seconds), at most `wanted`; they are taken from the bucket.
    public mutating func take(upTo wanted: Int, now: Double) -> Int {
        refill(now: now)
        let granted = min(wanted, Int(tokens))
        tokens -= Double(granted)
        return max(0, granted)
    }

    /// Seconds from `now` until at least one request may start.
    public mutating func delayUntilNext(now: Double) -> Double {
        refill(now: now)
        return tokens >= 1 ? 0 : (1 - tokens) / perSecond
    }

    private mutating func refill(now: Double) {
        if let last, now > last {
            tokens = min(burst, tokens + (now - last) * perSecond)
        }
        last = now
    }
}
