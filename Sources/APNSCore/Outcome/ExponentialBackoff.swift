/// Capped exponential back-off with equal jitter, and how many tries are allowed in all: used for retrying
/// requests (429, 5xx) and for reconnecting dropped connections.
public struct ExponentialBackoff: Sendable, Equatable {
    /// The delay before the first retry, in seconds (before jitter).
    public var base: Double
    /// The longest delay between two tries, in seconds.
    public var cap: Double
    /// Tries in all, the first included.
    public var maximumAttempts: Int

    /// For requests: 0.5 s doubling to 30 s, five tries in all.
    public static let requests = ExponentialBackoff(base: 0.5, cap: 30, maximumAttempts: 5)
    /// For connections: 0.25 s doubling to 30 s, without a count of tries: the pool gives up by time, one connection
    /// attempt after its failure window (`APNSClientConfiguration.failureWindow`), whatever its size.
    public static let connections = ExponentialBackoff(base: 0.25, cap: 30, maximumAttempts: .max)

    /// A back-off starting at `base` seconds, doubling up to `cap` seconds, for at most `maximumAttempts` tries.
    public init(base: Double, cap: Double, maximumAttempts: Int) {
        self.base = base
        self.cap = cap
        self.maximumAttempts = maximumAttempts
    }

    /// Whether something tried `attempts` times may be tried again.
    public func allowsRetry(afterAttempts attempts: Int) -> Bool {
        attempts < maximumAttempts
    }

    /// The delay after the `attempt`-th try (1-based): half the capped exponential step fixed, half random, so
    /// retries of a burst spread out but never come sooner than half the step.
    public func delay<G: RandomNumberGenerator>(afterAttempt attempt: Int, using generator: inout G) -> Double {
        let doublings = max(0, min(attempt - 1, 40))
        var step = base
        for _ in 0..<doublings where step < cap { step *= 2 }
        step = min(cap, step)
        guard step > 0 else { return 0 }
        return step / 2 + Double.random(in: 0...(step / 2), using: &generator)
    }
}
