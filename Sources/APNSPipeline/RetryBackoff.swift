/// When to try a retryable request again: capped exponential back-off with equal jitter, and how many tries a
/// record gets in all.
public struct RetryBackoff: Sendable, Equatable {
    /// The delay before the first retry, in seconds (before jitter).
    public var base: Double
    /// The longest delay between two tries, in seconds.
    public var cap: Double
    /// Tries in all, the first send included; a record that is still retryable after them ends `retryable`.
    public var maximumAttempts: Int

    public static let standard = RetryBackoff(base: 0.5, cap: 30, maximumAttempts: 5)

    public init(base: Double, cap: Double, maximumAttempts: Int) {
        self.base = base
        self.cap = cap
        self.maximumAttempts = maximumAttempts
    }

    /// Whether a record that has been tried `attempts` times may be tried again.
    public func allowsRetry(afterAttempts attempts: Int) -> Bool {
        attempts < maximumAttempts
    }

    /// The delay after the `attempt`-th try (1-based): half the capped exponential step fixed, half random, so
    /// retries of a burst spread out but never come sooner than half the step.
    public func delay<G: RandomNumberGenerator>(afterAttempt attempt: Int, using generator: inout G) -> Double {
        let exponent = Double(max(0, min(attempt - 1, 32)))
        let step = min(cap, base * pow2(exponent))
        guard step > 0 else { return 0 }
        return step / 2 + Double.random(in: 0...(step / 2), using: &generator)
    }

    private func pow2(_ exponent: Double) -> Double {
        var value = 1.0
        var remaining = Int(exponent)
        while remaining > 0 {
            value *= 2
            remaining -= 1
        }
        return value
    }
}
