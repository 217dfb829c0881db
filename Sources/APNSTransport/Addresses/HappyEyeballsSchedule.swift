/// When one connect dials which of its addresses, without I/O (Happy Eyeballs, RFC 8305 §5; docs/CONNECTING.md,
/// "Addresses"): the first address at once; the next one when the last started has had its head start
/// (`attemptDelay`, RFC 8305's "Connection Attempt Delay", 250 ms) without connecting, or at once when an attempt
/// fails or reaches its own timeout (`attemptTimeout`); the attempts race, the first to connect wins and the others
/// are dropped; the connect fails when every address has failed. `SocketConnector` runs its actions and calls
/// `tick` at `nextDeadline`.
///
///     waiting ──dial──▶ pending(deadline) ──attemptConnected──▶ connected (the others: dropped)
///                          │  ├──attemptFailed──▶ failed (the next address dials at once)
///                          │  └──deadline passed──▶ timedOut (the next address dials at once)
///                          └──another connected──▶ outrun (dialed before the winner) or cancelled (after it)
struct HappyEyeballsSchedule {
    /// Where one address's attempt stands.
    enum AttemptState: Hashable, Sendable {
        case waiting
        case pending(deadline: EventLoopInstant)
        case connected
        case failed
        case timedOut
        case dropped(ConnectAttemptOutcome)
    }

    /// What the connector does next, in order.
    enum Action: Hashable, Sendable {
        /// Start connecting to the address at this index.
        case dial(Int)
        /// Close the pending attempt at this index; `outcome` says why (timed out, outrun, cancelled).
        case drop(Int, ConnectAttemptOutcome)
        /// The attempt at this index connected: its socket is the connection. Nothing follows.
        case succeed(Int)
        /// Every address failed. Nothing follows.
        case fail
    }

    let attemptDelay: Double
    let attemptTimeout: Double
    private(set) var attempts: [AttemptState]
    /// The next address to dial.
    private var next = 0
    /// When the last attempt started.
    private var lastStart: EventLoopInstant?
    private(set) var isFinished = false

    init(addressCount: Int, attemptDelay: Double, attemptTimeout: Double) {
        attempts = Array(repeating: .waiting, count: max(0, addressCount))
        self.attemptDelay = max(0, attemptDelay)
        self.attemptTimeout = max(0, attemptTimeout)
    }

    /// Dials the first address (fails at once without any).
    mutating func start(now: EventLoopInstant) -> [Action] {
        guard !isFinished, lastStart == nil else { return [] }
        return dialNextOrFail(now: now)
    }

    /// The attempt at `index` failed (refused, unreachable, no socket): the next address dials at once.
    mutating func attemptFailed(_ index: Int, now: EventLoopInstant) -> [Action] {
        guard !isFinished, attempts.indices.contains(index), case .pending = attempts[index] else { return [] }
        attempts[index] = .failed
        return dialNextOrFail(now: now)
    }

    /// The attempt at `index` connected: it wins, every other pending attempt is dropped.
    mutating func attemptConnected(_ index: Int) -> [Action] {
        guard !isFinished, attempts.indices.contains(index), case .pending = attempts[index] else { return [] }
        attempts[index] = .connected
        isFinished = true
        var actions: [Action] = []
        for other in attempts.indices {
            guard case .pending = attempts[other] else { continue }
            let outcome: ConnectAttemptOutcome = other < index ? .outrun : .cancelled
            attempts[other] = .dropped(outcome)
            actions.append(.drop(other, outcome))
        }
        return actions + [.succeed(index)]
    }

    /// Time has passed: attempts past their timeout are dropped, and the next address dials when one timed out or
    /// the last one's head start is over.
    mutating func tick(now: EventLoopInstant) -> [Action] {
        guard !isFinished, let lastStart else { return [] }
        var actions: [Action] = []
        var timedOut = false
        for index in attempts.indices {
            guard case .pending(let deadline) = attempts[index], deadline <= now else { continue }
            attempts[index] = .timedOut
            actions.append(.drop(index, .timedOut))
            timedOut = true
        }
        if timedOut || lastStart.advanced(bySeconds: attemptDelay) <= now {
            actions += dialNextOrFail(now: now)
        }
        return actions
    }

    /// When `tick` has something to do: the end of the head start (while addresses are left) or the first
    /// attempt's timeout. Nil once finished.
    var nextDeadline: EventLoopInstant? {
        guard !isFinished, let lastStart else { return nil }
        var earliest: EventLoopInstant? = next < attempts.count ? lastStart.advanced(bySeconds: attemptDelay) : nil
        for case .pending(let deadline) in attempts where earliest.map({ deadline < $0 }) ?? true {
            earliest = deadline
        }
        return earliest
    }

    /// Attempts pending now.
    var pendingCount: Int {
        attempts.reduce(0) { count, state in
            if case .pending = state { return count + 1 }
            return count
        }
    }

    /// Dials the next address; without one left, fails once nothing is pending any more.
    private mutating func dialNextOrFail(now: EventLoopInstant) -> [Action] {
        if next < attempts.count {
            let index = next
            next += 1
            attempts[index] = .pending(deadline: now.advanced(bySeconds: attemptTimeout))
            lastStart = now
            return [.dial(index)]
        }
        lastStart = lastStart ?? now
        guard pendingCount == 0 else { return [] }
        isFinished = true
        return [.fail]
    }
}
