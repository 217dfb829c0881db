import APNSCore

/// Decides, request by request, which faults of a `FaultPlan` fire: it owns the seeded generator and the
/// server-wide `every:N` counters, so a run with the same seed and the same request sequence is reproduced exactly.
///
/// The validator asks, in this order, for each request on a connection: `dropsConnection` (before validating),
/// then, for an answer that would have been 200, `replacementAnswer`; then for every answer `latencyMilliseconds`,
/// `sendsGoaway` and `loweredStreamLimit`.
public struct FaultInjector: Sendable {
    /// A trigger with its compiled threshold or running counter.
    private struct Trigger: Sendable {
        enum Kind: Sendable {
            case rate(threshold: UInt64)
            case every(Int)
            case after(Int)
        }

        let kind: Kind
        var counter = 0

        init(_ trigger: FaultTrigger) {
            switch trigger {
            case .rate(let rate): kind = .rate(threshold: SplitMix64.threshold(forRate: rate))
            case .every(let count): kind = .every(count)
            case .after(let count): kind = .after(count)
            }
        }

        /// Advances the trigger for one eligible event; `answered` is the connection's answer count for `after:N`.
        @inline(__always)
        mutating func fires(answered: Int, random: inout SplitMix64) -> Bool {
            switch kind {
            case .rate(let threshold):
                return random.draw(threshold: threshold)
            case .every(let count):
                counter += 1
                guard counter >= count else { return false }
                counter = 0
                return true
            case .after(let count):
                return answered == count
            }
        }
    }

    /// The faults to inject.
    public let plan: FaultPlan
    private var random: SplitMix64
    private var answers: [(answer: FaultAnswer, trigger: Trigger)] = []
    private var goaway: Trigger?
    private var drop: Trigger?
    private var latency: ClosedRange<Int>?
    private var lowerStreams: (after: Int, to: Int)?

    /// An injector of `plan`, its random choices fixed by `seed`.
    public init(plan: FaultPlan, seed: UInt64) {
        self.plan = plan
        random = SplitMix64(seed: seed)
        for spec in plan.specs {
            switch spec {
            case .answer(let answer, let trigger): answers.append((answer, Trigger(trigger)))
            case .goaway(let trigger): goaway = Trigger(trigger)
            case .drop(let trigger): drop = Trigger(trigger)
            case .latency(let range): latency = range
            case .lowerStreams(let after, let limit): lowerStreams = (after, limit)
            }
        }
        // A fixed precedence when several answer faults fire on the same request.
        answers.sort { Self.precedence($0.answer) < Self.precedence($1.answer) }
    }

    /// Whether the connection is dropped on this request instead of answering it; `answered` is the number of
    /// answers the connection has already sent.
    public mutating func dropsConnection(answeredOnConnection answered: Int) -> Bool {
        guard var trigger = drop else { return false }
        defer { drop = trigger }
        return trigger.fires(answered: answered, random: &random)
    }

    /// The error answer that replaces a would-be-200, if any. Every configured answer fault advances on every call
    /// (so one fault's rate does not shift another's draws); the first that fires, in the order expired-token, 429,
    /// 500, 503, wins. `expired-token` only applies to token-authenticated requests.
    public mutating func replacementAnswer(tokenAuthenticated: Bool) -> FaultAnswer? {
        var chosen: FaultAnswer?
        for index in answers.indices {
            let fired = answers[index].trigger.fires(answered: 0, random: &random)
            let applies = answers[index].answer != .expiredProviderToken || tokenAuthenticated
            if fired, applies, chosen == nil { chosen = answers[index].answer }
        }
        return chosen
    }

    /// The delay to put before this answer, if latency is configured.
    public mutating func latencyMilliseconds() -> Int? {
        guard let latency else { return nil }
        return random.integer(in: latency)
    }

    /// Whether a GOAWAY `Shutdown` follows this answer; `answered` counts the connection's answers including this one.
    public mutating func sendsGoaway(answeredOnConnection answered: Int) -> Bool {
        guard var trigger = goaway else { return false }
        defer { goaway = trigger }
        return trigger.fires(answered: answered, random: &random)
    }

    /// The lowered stream limit to announce after this answer, once per connection; `answered` counts the
    /// connection's answers including this one.
    public func loweredStreamLimit(answeredOnConnection answered: Int) -> Int? {
        guard let lowerStreams, answered == lowerStreams.after else { return nil }
        return lowerStreams.to
    }

    private static func precedence(_ answer: FaultAnswer) -> Int {
        FaultAnswer.allCases.firstIndex(of: answer) ?? 0
    }
}

// MARK: - SplitMix64+Faults

/// The mock's fault draws from its seeded generator: Bernoulli draws at a rate, and uniform latencies.
extension SplitMix64 {
    /// A Bernoulli draw: true with probability `threshold / 2^64` (see `Self.threshold(forRate:)`).
    @inline(__always)
    mutating func draw(threshold: UInt64) -> Bool {
        threshold == .max || next() < threshold
    }

    /// The 64-bit threshold for a probability in 0...1; `UInt64.max` means always.
    static func threshold(forRate rate: Double) -> UInt64 {
        guard rate > 0 else { return 0 }
        guard rate < 1 else { return .max }
        let scaled = rate * 18_446_744_073_709_551_616.0  // 2^64
        return scaled >= 18_446_744_073_709_551_615.0 ? .max : UInt64(scaled)
    }

    /// A uniform integer in `range` (inclusive), without modulo bias worth mentioning for the small ranges used here.
    @inline(__always)
    mutating func integer(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard span > 1 else { return range.lowerBound }
        let high = next().multipliedFullWidth(by: span).high
        return range.lowerBound + Int(high)
    }
}
