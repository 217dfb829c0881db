/// How many requests may be in flight at once, across all connections (the in-flight window): as many as the
/// measured throughput needs, not as many as the server allows. Every request in flight on a connection that
/// drops ends `in_doubt`, and every request in flight when a campaign-wide rejection arrives is wasted, so the
/// window is kept near the rate × latency product plus headroom (in the spirit of TCP Vegas and BBR).
///
/// Measured in rounds: a round ends with the first answer to a request sent after the round began (one round
/// trip). Each round yields a delivery rate (answers / round length) and a mean latency.
/// - Slow start: while the window is full, each answer adds one to it (it doubles per round trip); slow start
///   ends when three rounds in a row did not raise the rate by a quarter, or after one such round if the
///   latency also doubled (the extra requests only queue).
/// - Then the window follows `headroom × best recent rate × base latency`: the best rate of the last ten rounds
///   and the lowest round-mean latency seen (the latency without queueing). A server that gets faster raises the
///   rate and so the window (the headroom leaves room to notice); queueing raises only the latency, which does
///   not raise the window. Every ten seconds one short probe (a quarter of the window for two rounds) measures
///   the base latency afresh, so a server that got slower is followed too.
/// - Never below `minimum`, never above `maximum` (`--max-in-flight`) nor above the stream slots the transport
///   offered (inFlight + freeSlots, the servers' `SETTINGS_MAX_CONCURRENT_STREAMS` over the ready connections)
///   in the last two rounds.
///
/// A plain value with no I/O and no clock of its own: the dispatcher feeds it times from its scheduler.
public struct InFlightWindow: Sendable {
    /// The tuning; the defaults are what `send` uses.
    public struct Settings: Sendable, Equatable {
        /// The window before anything is measured: small, so a campaign-wide rejection costs few requests.
        public var initial = 16
        public var minimum = 4
        /// A hard cap (`--max-in-flight`).
        public var maximum = Int.max
        /// The window over the rate × base-latency product in steady state.
        public var headroom = 2.0
        /// Seconds a base-latency measurement is trusted before a probe measures it again.
        public var baseLifetime = 10.0

        public init() {}
    }

    enum Phase: Sendable, Equatable {
        case slowStart
        case steady
        /// Measuring the base latency with a small window; the count says how many rounds are left.
        case probing(roundsLeft: Int)
    }

    public let settings: Settings
    /// The current window: the dispatcher starts a request only while fewer than this many are in flight.
    public private(set) var size: Int
    private(set) var phase = Phase.slowStart

    /// The lowest round-mean latency (seconds) and when it was measured.
    private(set) var baseLatency: Double?
    private var baseMeasuredAt = 0.0
    /// Delivery rates (answers per second) of the last rounds, newest last.
    private(set) var recentRates: [Double] = []
    private static let rateRounds = 10
    /// Slow start: the best rate so far and how many window-full rounds in a row did not beat it by a quarter.
    private var slowStartRate = 0.0
    private var stalledRounds = 0

    // The round being measured.
    private var roundStart: Double?
    private var roundAnswers = 0
    private var roundLatencySum = 0.0
    private var roundWindowFull = false
    /// Whether the window was full at the last `observe`.
    private var windowFull = false
    private var roundCapacity = 0
    private var previousRoundCapacity = 0

    public init(settings: Settings = Settings()) {
        let minimum = max(1, settings.minimum)
        var settings = settings
        settings.minimum = minimum
        settings.maximum = max(minimum, settings.maximum)
        settings.initial = min(settings.maximum, max(minimum, settings.initial))
        self.settings = settings
        self.size = settings.initial
    }

    /// The best delivery rate of the recent rounds, answers per second (0 before the first round).
    public var rate: Double { recentRates.max() ?? 0 }

    /// Call after each round of submits with the number in flight and the stream slots the transport offered
    /// (in flight + free slots): marks the round window-limited when the window was full.
    public mutating func observe(inFlight: Int, capacity: Int) {
        windowFull = inFlight >= size
        if windowFull { roundWindowFull = true }
        roundCapacity = max(roundCapacity, capacity)
    }

    /// Call for each answer from the server (not for transport failures): when its request was sent and now.
    public mutating func answered(sentAt: Double, now: Double) {
        if phase == .slowStart, windowFull { size = clamped(size + 1) }
        guard let start = roundStart else {
            startRound(at: now)
            record(latency: now - sentAt)
            return
        }
        record(latency: now - sentAt)
        guard sentAt >= start else { return }
        let length = now - start
        let meanLatency = roundLatencySum / Double(roundAnswers)
        let roundRate = length > 0 ? Double(roundAnswers) / length : nil
        endRound(rate: roundRate, latency: meanLatency, now: now)
        startRound(at: now)
    }

    private mutating func record(latency: Double) {
        roundAnswers += 1
        roundLatencySum += max(0, latency)
    }

    private mutating func startRound(at now: Double) {
        roundStart = now
        roundAnswers = 0
        roundLatencySum = 0
        roundWindowFull = false
        previousRoundCapacity = roundCapacity
        roundCapacity = 0
    }

    private mutating func endRound(rate roundRate: Double?, latency: Double, now: Double) {
        if let roundRate {
            recentRates.append(roundRate)
            if recentRates.count > Self.rateRounds { recentRates.removeFirst() }
        }
        switch phase {
        case .slowStart:
            let latencyRose = baseLatency.map { latency > 2 * $0 } ?? false
            lowerBase(to: latency, now: now)
            guard roundWindowFull, let roundRate else { break }
            if roundRate >= 1.25 * slowStartRate {
                slowStartRate = roundRate
                stalledRounds = 0
            } else {
                stalledRounds += 1
                if latencyRose || stalledRounds >= 3 {
                    phase = .steady
                    size = clamped(target)
                }
            }
        case .steady:
            lowerBase(to: latency, now: now)
            if now - baseMeasuredAt > settings.baseLifetime {
                phase = .probing(roundsLeft: 2)
                size = clamped(target / 4)
            } else {
                size = clamped(target)
            }
        case .probing(let roundsLeft):
            if roundsLeft > 1 {
                phase = .probing(roundsLeft: roundsLeft - 1)
            } else {
                baseLatency = latency  // the old value expired: this round, with a small window, replaces it
                baseMeasuredAt = now
                phase = .steady
                size = clamped(target)
            }
        }
        size = clamped(size)  // a server that lowered its stream limit lowers the window too
    }

    private mutating func lowerBase(to latency: Double, now: Double) {
        guard baseLatency.map({ latency <= $0 }) ?? true else { return }
        baseLatency = latency
        baseMeasuredAt = now
    }

    /// `headroom × rate × base latency`, rounded up.
    private var target: Int {
        guard let baseLatency else { return size }
        let product = settings.headroom * rate * baseLatency
        return product.isFinite ? Int(min(product.rounded(.up), Double(Int32.max))) : size
    }

    /// Within the minimum, the hard cap and the slots the transport offered lately.
    private func clamped(_ proposed: Int) -> Int {
        var ceiling = settings.maximum
        let offered = max(roundCapacity, previousRoundCapacity)
        if offered > 0 { ceiling = min(ceiling, offered) }
        return max(settings.minimum, min(ceiling, proposed))
    }
}
