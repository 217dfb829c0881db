/// The token bucket that limits how fast a client may reset streams the server has not answered yet (the HTTP/2
/// rapid-reset attack, CVE-2023-44487): `burst` resets at once, then `perSecond` more each second. Resets of
/// streams already answered never reach it (clients such as async-http-client cancel ~2% of streams after
/// reading their answer). The same defaults as nghttp2's own limiter (1000 and 33), which the server session
/// turns off because it counts every RST_STREAM. Time is passed in, so the rule is tested without a clock.
public struct HTTP2ResetRateLimit: Hashable, Sendable {
    /// Resets allowed at once (the bucket's size).
    public var burst: Int
    /// Resets regained per second.
    public var perSecond: Int

    /// A limit allowing `burst` stream resets at once and `perSecond` more each second.
    public init(burst: Int = 1000, perSecond: Int = 33) {
        self.burst = burst
        self.perSecond = perSecond
    }
}

/// The running state of an `HTTP2ResetRateLimit` on one connection.
struct HTTP2ResetRateLimiter {
    let limit: HTTP2ResetRateLimit
    /// Tokens left; starts full.
    private var tokens: Double
    /// When `tokens` was last brought up to date, in seconds on a monotonic clock; nil before the first reset.
    private var updatedAt: Double?

    init(_ limit: HTTP2ResetRateLimit) {
        self.limit = limit
        self.tokens = Double(limit.burst)
    }

    /// Takes one token for a reset at `now` (monotonic seconds). False when none is left: the client resets
    /// unanswered streams faster than the limit allows.
    mutating func allowReset(at now: Double) -> Bool {
        if let updatedAt, now > updatedAt {
            tokens = min(Double(limit.burst), tokens + (now - updatedAt) * Double(limit.perSecond))
        }
        updatedAt = max(now, updatedAt ?? now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
