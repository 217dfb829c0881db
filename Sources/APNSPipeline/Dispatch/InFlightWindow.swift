/// How many requests may be in flight at once, across all connections (the in-flight window): as many as the
/// measured throughput needs, not as many as the server allows. Every request in flight on a connection that
/// drops ends `in_doubt`, and every request in flight when a campaign-wide rejection arrives is wasted, so more in
/// flight is kept only while it buys throughput (in the spirit of TCP Vegas and BBR).
///
/// Measured in rounds: a round ends with the first answer to a request sent after the round began (one round
/// trip). Each round yields a delivery rate (requests that left the window, answered or lost with their
/// connection, / round length) and a mean latency (of the answers). The rate the window
/// follows is the best of the last ten rounds, each taken over four rounds (answers come in bursts when a
/// process is short of CPU); the base latency is the lowest round-mean latency seen (the latency without
/// queueing). `target` is `headroom × rate × base latency`, the product plus headroom.
/// - Slow start: while the window is full, each accepted answer adds three to it (it quadruples per round trip;
///   a rejected one adds one, so a campaign-wide rejection costs few requests), up to 256 or
///   6 × its best round rate × base latency if more; it ends when three rounds in a row did not raise the rate
///   by a quarter, or after two such rounds in a row if the latency also doubled in both (the extra requests
///   only queue; one round is as often a pause of the server, and ending there left a sixth of the window). It
///   hands over at the window that earned the best rate, or at `target` taken with the best round's rate if more.
/// - Then the window climbs the throughput hill in stages of four rounds and a quarter of a second at least:
///   hold the window and measure the rate; try a quarter more and keep it if the rate rose by 5 % (then try
///   more again, each step in a row twice the last: a half more, then twice as many); otherwise try 15 % less and keep that if the rate stayed within 3 % of the best (then try
///   less again), else go back. The window never falls below `target` and climbs no higher than 256,
///   1.5 × `target` or twice the last probe up that raised the rate, whichever is most.
/// - Where latency limits the rate, the rate grows with the window and so do both limits: the window opens as
///   wide as the rate needs. Where CPU limits it, more in flight buys only batching, and the limits keep the
///   requests a dropped connection puts in doubt few.
/// - Never below `minimum`, never above `maximum` (`--max-in-flight`) nor above the stream slots the transport
///   offered (in flight + free slots: the servers' `SETTINGS_MAX_CONCURRENT_STREAMS` over the ready
///   connections) in the last two rounds.
///
/// A plain value with no I/O and no clock of its own: the dispatcher feeds it times from its scheduler.
public struct InFlightWindow: Sendable {
    /// The tuning; the defaults are what `send` uses.
    public struct Settings: Sendable, Equatable {
        /// The window before anything is measured: small, so a campaign-wide rejection costs few requests.
        public var initial = 16
        /// The floor: a mistaken estimate can cost some throughput, never all of it.
        public var minimum = 16
        /// A hard cap (`--max-in-flight`).
        public var maximum = Int.max
        /// The window over the rate × base-latency product in steady state.
        public var headroom = 1.5

        /// The default settings.
        public init() {}
    }

    enum Phase: Sendable, Equatable {
        case slowStart
        /// Climbing the throughput hill: the stage being measured.
        case holding, probingUp, probingDown
    }

    /// The settings the window adapts within.
    public let settings: Settings
    /// The current window: the dispatcher starts a request only while fewer than this many are in flight.
    public private(set) var size: Int
    private(set) var phase = Phase.slowStart

    /// The lowest round-mean latency, seconds.
    private(set) var baseLatency: Double?
    /// Steady state: the window and rate last kept, and the stage being measured.
    private var heldSize = 0
    /// The window of the last probe up that raised the rate by 5 % (0 after a probe down that kept it): the climb
    /// may go up to twice it whatever the product says.
    private var provenSize = 0
    /// Probes up in a row that raised the rate: each doubles the next step (a quarter, a half, twice as many).
    private var winsInARow = 0
    private var heldRate = 0.0
    private var stageAnswers = 0
    private var stageTime = 0.0
    private var stageRounds = 0
    /// A stage lasts at least this many rounds and seconds: rates over shorter spans are mostly noise.
    private static let roundsPerStage = 4
    private static let secondsPerStage = 0.25
    /// Delivery rates (answers per second, each over four rounds) of the last rounds, newest last.
    private(set) var recentRates: [Double] = []
    private static let rateRounds = 10
    /// Answers and length of the last rounds, for the four-round rate.
    private var recentRounds: [(answers: Int, length: Double)] = []
    private static let smoothingRounds = 4
    /// A round's mean latency counts as a base-latency sample only over this many answers: the mean of one or two
    /// lucky answers is no base.
    private static let baseSampleAnswers = 8
    /// Slow start: the best rate so far and how many window-full rounds in a row did not beat it by a quarter.
    private var slowStartRate = 0.0
    /// Whether slow start's limit has stopped the window's growth, or a round with the window full did not raise
    /// the rate: its `reach` is bounded by the limit from then on.
    private var slowStartLimitReached = false
    private var stalledRounds = 0
    /// Slow start: how many of those rounds in a row also had twice the base latency. One such round is as often
    /// a server that paused (its core busy with handshakes or a neighbour) as a queue; two are a queue.
    private var latencyRoseRounds = 0
    /// Slow start: the window when the previous round began (the requests answered in a round were mostly sent
    /// in the one before), and the one that earned the best rate.
    private var previousRoundSize = 0
    private var currentRoundSize = 0
    private var bestRateSize = 0

    // The round being measured.
    private var roundStart: Double?
    private var roundAnswers = 0
    /// Requests of the round that left the window without an answer: their connection was lost (`lost`).
    private var roundLost = 0
    private var roundLatencySum = 0.0
    private var roundWindowFull = false
    /// What each accepted answer adds in slow start: the window quadruples per round trip, so at 100 ms it reaches
    /// thousands in half a second, not a second.
    private static let slowStartGrowth = 3
    /// Whether the window was full at the last `observe`.
    private var windowFull = false
    private var roundCapacity = 0
    private var previousRoundCapacity = 0

    /// A window with `settings`, at its initial size.
    public init(settings: Settings = Settings()) {
        var settings = settings
        settings.maximum = max(1, settings.maximum)
        settings.minimum = min(max(1, settings.minimum), settings.maximum)  // the hard cap wins
        settings.initial = min(settings.maximum, max(settings.minimum, settings.initial))
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

    /// Call for each answer from the server (not for transport failures): when its request was sent and now, and
    /// whether the server accepted it (200): in slow start an accepted answer adds `slowStartGrowth`, a rejected one
    /// one, so a campaign-wide rejection (a wrong topic or key) costs few requests.
    public mutating func answered(sentAt: Double, now: Double, accepted: Bool = true) {
        if phase == .slowStart, windowFull {
            if size < slowStartLimit {
                size = clamped(size + (accepted ? Self.slowStartGrowth : 1))
            } else {
                slowStartLimitReached = true
            }
        }
        guard let start = roundStart else {
            startRound(at: now)
            record(latency: now - sentAt)
            return
        }
        record(latency: now - sentAt)
        guard sentAt >= start else { return }
        let length = now - start
        let meanLatency = roundLatencySum / Double(roundAnswers)
        // The rate counts every request that left the window, answered or lost with its connection: a lost
        // connection takes its requests with it, and counting only answers read each drop as a fall in the rate
        // (at 0.1 % of requests dropping their connection, the window settled at half its size).
        let completed = roundAnswers + roundLost
        recentRounds.append((completed, length))
        if recentRounds.count > Self.smoothingRounds { recentRounds.removeFirst() }
        let roundRate = length > 0 ? Double(completed) / length : nil
        endRound(rate: roundRate, latency: meanLatency, length: length)
        startRound(at: now)
    }

    /// Call for each request whose connection was lost before its answer (it ends in doubt): it left the window
    /// like an answered one and counts toward the round's rate, not toward its latency, nor toward slow start's
    /// growth.
    public mutating func lost() {
        if roundStart != nil { roundLost += 1 }
    }

    private mutating func record(latency: Double) {
        roundAnswers += 1
        roundLatencySum += max(0, latency)
    }

    private mutating func startRound(at now: Double) {
        roundStart = now
        roundAnswers = 0
        roundLost = 0
        roundLatencySum = 0
        roundWindowFull = false
        previousRoundSize = currentRoundSize
        currentRoundSize = size
        previousRoundCapacity = roundCapacity
        roundCapacity = 0
    }

    private mutating func endRound(rate roundRate: Double?, latency: Double, length: Double) {
        let span = recentRounds.reduce(0) { $0 + $1.length }
        if span > 0 {
            recentRates.append(Double(recentRounds.reduce(0) { $0 + $1.answers }) / span)
            if recentRates.count > Self.rateRounds { recentRates.removeFirst() }
        }
        switch phase {
        case .slowStart:
            let latencyRose = baseLatency.map { latency > 2 * $0 } ?? false
            lowerBase(to: latency)
            guard roundWindowFull, let roundRate else { break }
            if roundRate >= 1.25 * slowStartRate {
                slowStartRate = roundRate
                bestRateSize = previousRoundSize
                stalledRounds = 0
                latencyRoseRounds = 0
            } else {
                stalledRounds += 1
                slowStartLimitReached = true  // the rate, not the limit, stopped it: the limit holds it now
                latencyRoseRounds = latencyRose ? latencyRoseRounds + 1 : 0
                if latencyRoseRounds >= 2 || stalledRounds >= 3 {
                    phase = .holding
                    size = clamped(max(target(rate: max(rate, slowStartRate)), min(bestRateSize, climbLimit)))
                }
            }
        case .holding, .probingUp, .probingDown:
            lowerBase(to: latency)
            size = max(size, clamped(target))  // never below what the rate and base latency need
            stageAnswers += roundAnswers + roundLost
            stageTime += length
            stageRounds += 1
            guard stageRounds >= Self.roundsPerStage, stageTime >= Self.secondsPerStage else { break }
            endStage(rate: Double(stageAnswers) / stageTime)
            stageAnswers = 0
            stageTime = 0
            stageRounds = 0
        }
        size = clamped(size)  // a server that lowered its stream limit lowers the window too
    }

    /// One stage of the hill climb measured: keep, try further, or go back.
    private mutating func endStage(rate stageRate: Double) {
        switch phase {
        case .slowStart, .holding:
            heldSize = size
            heldRate = stageRate
            phase = .probingUp
            size = clamped(min(climbLimit, max(size + 4, size * 5 / 4)))
        case .probingUp:
            if stageRate >= 1.05 * heldRate, size > heldSize {
                heldSize = size
                provenSize = size
                heldRate = stageRate
                // Each probe in a row that raised the rate doubles the next step: a half more, then twice as many.
                winsInARow += 1
                let quarters = min(4, 1 << winsInARow)
                size = clamped(min(climbLimit, max(size + 4, size + size * quarters / 4)))
            } else {
                winsInARow = 0
                phase = .probingDown
                size = clamped(max(target, heldSize * 17 / 20))
            }
        case .probingDown:
            if stageRate >= 0.97 * heldRate, size < heldSize {
                heldSize = size
                provenSize = 0  // less in flight kept the rate: the window is past what the rate needs
                heldRate = max(heldRate, stageRate)
                size = clamped(max(target, size * 17 / 20))
            } else {
                phase = .holding
                size = clamped(heldSize)
            }
        }
    }

    private mutating func lowerBase(to latency: Double) {
        guard roundAnswers >= Self.baseSampleAnswers, baseLatency.map({ latency <= $0 }) ?? true else { return }
        baseLatency = latency
    }

    /// What the window may grow to before its measurements say more, for the transport to keep room for: twice
    /// the climb's limit, or in slow start twice its own limit once that limit or a round without a gain has
    /// stopped the window (twice the window at least), within
    /// `settings.maximum`. Twice, so that room is ready while a limit that follows the rate grows. Slow start
    /// before that may reach `settings.maximum`: where latency limits the rate the window
    /// quadruples each round trip, and a connection opened now carries its share three round trips later (at
    /// RTT 100 ms, room kept for twice slow start's limit from its first round lowered the rate by 4 to 8 %).
    public var reach: Int {
        let limit: Int
        switch phase {
        case .slowStart:
            guard slowStartLimitReached else { return settings.maximum }
            limit = max(size, slowStartLimit)
        case .holding, .probingUp, .probingDown: limit = max(size, climbLimit)
        }
        return limit >= settings.maximum / 2 ? settings.maximum : 2 * limit
    }

    /// `headroom × rate × base latency`, rounded up.
    private var target: Int { target(rate: rate) }

    /// `headroom × rate × base latency` for a given rate. Slow start hands over with its best round's rate: the
    /// rate over four rounds lags a window that quadrupled each round (at RTT 20 ms it read half the best round's).
    private func target(rate: Double) -> Int {
        guard let baseLatency else { return size }
        let product = settings.headroom * rate * baseLatency
        return product.isFinite ? Int(min(product.rounded(.up), Double(Int32.max))) : size
    }

    /// How far the hill climb may go: 256, one and a half times `target`, or twice the last probe up that raised
    /// the rate, whichever is most. Where the latency limits the rate this never binds (the rate grows with
    /// the window, and so do `target` and the proven window, even where the base latency misleads: a proxy that
    /// passes a quiet connection's first requests in 4 ms and the rest in 45); where a process short of CPU limits
    /// it, more in flight buys only batching, not worth the requests a dropped connection would put in doubt.
    private var climbLimit: Int {
        max(settings.minimum, Self.batchingWindow, target * 3 / 2, 2 * provenSize)
    }
    /// How far slow start may go: 256, or six times the best round's rate × the base latency (the rate lags the
    /// window by a round, so this allows doubling where latency limits the rate, not where CPU does).
    private var slowStartLimit: Int {
        guard let baseLatency else { return Int.max }
        let product = 6 * slowStartRate * baseLatency
        return product.isFinite ? max(Self.batchingWindow, Int(min(product, Double(Int32.max)))) : Int.max
    }

    /// What the climb may always reach, whatever the product: enough in flight for a busy client to batch its
    /// writes, little enough that a dropped connection puts few requests in doubt.
    private static let batchingWindow = 256

    /// At least the minimum, at most the hard cap and the slots the transport offered lately.
    private func clamped(_ proposed: Int) -> Int {
        var ceiling = settings.maximum
        let offered = max(roundCapacity, previousRoundCapacity)
        if offered > 0 { ceiling = min(ceiling, offered) }
        return min(ceiling, max(settings.minimum, proposed))  // the server's limit wins over the floor
    }
}
