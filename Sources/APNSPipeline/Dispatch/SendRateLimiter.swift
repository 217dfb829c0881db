/// A token bucket that caps how many requests start per second (`--rate`), with a burst of a tenth of a second's
/// worth so the cap is smooth rather than once-a-second bursts.
public struct SendRateLimiter: Sendable {
    /// The most requests to start per second.
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
        let granted = min(wanted, Int(tokens + Self.epsilon))
        tokens -= Double(granted)
        return max(0, granted)
    }

    /// Seconds from `now` until at least one request may start.
    public mutating func delayUntilNext(now: Double) -> Double {
        refill(now: now)
        guard tokens + Self.epsilon < 1 else { return 0 }
        return max(Self.minimumWait, (1 - tokens) / perSecond)
    }

    /// Absorbs floating-point error, so a bucket at 0.9999999 counts as holding one request.
    private static let epsilon = 1e-6
    /// Wake-ups closer together than this are not worth a loop turn.
    private static let minimumWait = 0.001

    private mutating func refill(now: Double) {
        if let last, now > last {
            tokens = min(burst, tokens + (now - last) * perSecond)
        }
        last = now
    }
}
