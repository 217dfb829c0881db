// The run's lifecycle (`state`). Every event is a mutating method that returns what the dispatcher does next: a
// `DispatcherAction`, or for the steps inside a pump turn what the pump needs next (its budget, the next send
// waiting, the effect of a record read, a tag).
//
//                   stop(cause)                            transport to close
//    +-----------+ -------------> +-------------------+ ---------------------> +---------------------------+
//    |  sending  |                |  stopping         |   (grace period over,  |  closingTransport         |
//    | inputOpen |                |  cause, inputOpen |    abortInFlight,      |  cause?, inputOpen,       |
//    +-----------+                +-------------------+    runFailed, settled) |  closed                   |
//          |                                                                   +---------------------------+
//          |      settled: every record read and answered, no cause                 ^              |
//          +------------------------------------------------------------------------+              |
//                                                                      transportClosed sets closed;|
//                                                                      once settled: reportEnd     v
//                                                                                            +---------+
//                                                                                            |  ended  |
//                                                                                            +---------+
//
//  - A stop's cause: `--stop-after` rejections in a row, the transport failing, an interrupt, or `runFailed` (the
//    files themselves failed). The first cause wins; a stop while closing without a cause sets it.
//  - `inputExhausted` clears `inputOpen` in any state but `ended`; `transportClosed` in `sending` or `stopping`
//    (the transport closed by itself) goes straight to `closingTransport` with `closed` set.
//  - Settled: nothing more is read, nothing is in flight, waiting for a retry or to be resent. Then the transport
//    is closed (no cause yet), and once it said it closed the end is reported, once.
//
// Besides the lifecycle the machine keeps the pump's budget (free slots, the in-flight window, the rate limit),
// the work waiting (in flight, retries, resends) and the loop turns it asked for (`LoopTimers`).

import APNSCore

/// The dispatcher's decisions without I/O: its lifecycle, what may be sent and read each loop turn, when the loop
/// wakes next, what each answer leads to, how a stop and the end go. `Dispatcher` feeds it events and runs the
/// `DispatcherAction` each returns; tests drive it directly, with instants of their own.
struct DispatcherStateMachine {
    typealias Ending = CampaignSummary.Ending

    /// The run's lifecycle, each phase with what it still needs to know.
    enum State: Equatable {
        /// Reading records and sending them (`inputOpen` false: every record is read; answers and retries are
        /// still awaited).
        case sending(inputOpen: Bool)
        /// A stop began: no new requests; requests in flight are still awaited. After an early stop the reader
        /// is still read to the end, to write `not_sent` lines; after an interrupt it is not read at all.
        case stopping(Ending, inputOpen: Bool)
        /// The transport was asked to close (`closed`: it said it has); nothing more is sent.
        case closingTransport(Ending?, inputOpen: Bool, closed: Bool)
        /// The run's end was reported; nothing happens any more.
        case ended
    }

    /// The loop turns the machine asked the dispatcher to schedule and has not yet seen run: not a phase of the
    /// run but bookkeeping of timers, so that requests for the same turn are merged into one.
    struct LoopTimers {
        /// A pump turn is asked for and has not begun yet.
        var pumpTurnScheduled = false
        /// The loop turn (its instant) the last pump turn began in: answers that come back in it ask for the
        /// next pump on the next loop turn, so one loop turn never pumps in a loop.
        var lastPumpAt: Double?
        /// When the scheduled wake-up falls due, if one is.
        var wakeUpAt: Double?
    }

    // Internal rather than private: the machine's extensions (`+Pump`, `+Answer`, `+Stop`) live in files of
    // their own. Only the machine changes them; the dispatcher and the tests read them.
    let configuration: DispatcherConfiguration
    var state = State.sending(inputOpen: true)
    /// Sends in flight, each with when it went out.
    var inFlight = InFlightTable()
    /// Sends waiting for their back-off.
    var retries = RetryQueue()
    /// Sends the server never processed, waiting for a slot.
    var unprocessedResends: [PendingSend] = []
    var health: CampaignHealth
    var limiter: SendRateLimiter?
    var window: InFlightWindow
    var generator = SystemRandomNumberGenerator()
    var timers = LoopTimers()
    private(set) var startedAt = 0.0
    /// The failure of the files themselves that ended the run, if any (the first one).
    var runFailure: (any Error)?
    /// What the run has done so far.
    var summary = CampaignSummary()

    init(configuration: DispatcherConfiguration) {
        self.configuration = configuration
        health = CampaignHealth(threshold: configuration.stopAfterConsecutiveFailures)
        limiter = configuration.ratePerSecond.map { SendRateLimiter(perSecond: $0) }
        window = InFlightWindow(settings: configuration.window)
        summary.inFlightWindow = window.size
    }

    // MARK: - Events outside the pump

    /// The run starts: the first pump turn is scheduled.
    mutating func start(now: Double) -> DispatcherAction {
        startedAt = now
        var action = DispatcherAction()
        requestPumpTurn(&action)
        return action
    }

    /// The transport has free slots, at `now`: a pump turn (once), after the events queued now.
    mutating func slotsFreed(now: Double) -> DispatcherAction {
        var action = DispatcherAction()
        requestPumpTurn(&action, afterQueuedEventsAt: now)
        return action
    }

    /// A final line is being written: it is counted.
    mutating func countFinalResult(_ result: ResultRecord) {
        summary.add(result.outcome)
        if result.isRejectedByAPNs { summary.rejected += 1 }
        if let reason = result.reason {
            summary.reasons["\(result.outcome.rawValue)/\(reason)", default: 0] += 1
        }
    }

    /// The counts for a progress line, as of `now`, and how many requests are in flight.
    mutating func progress(now: Double, readProgress: ReadProgress?) -> (summary: CampaignSummary, inFlight: Int) {
        summary.elapsedSeconds = now - startedAt
        noteProgressFacts(readProgress: readProgress)
        summary.inFlightWindow = window.size
        return (summary, inFlight.count)
    }

    /// Updates what the progress line shows besides the counts: retries waiting, how far the reader has read.
    mutating func noteProgressFacts(readProgress: ReadProgress?) {
        summary.retriesPending = retries.count
        summary.readProgress = readProgress
    }

    /// Asks for a pump turn, unless one is asked for already or the run has ended: on the next loop turn, or
    /// with `afterQueuedEventsAt` (the transport's events, handled on a loop turn after they came) once the events
    /// queued now are handled, unless this loop turn (`now`) has pumped already.
    mutating func requestPumpTurn(_ action: inout DispatcherAction, afterQueuedEventsAt now: Double? = nil) {
        let turn = pumpTurnRequested(afterQueuedEventsAt: now)
        if turn != .none { action.pumpTurn = turn }
    }

    /// The pump turn `requestPumpTurn` asks for (`none` when one is asked for already or the run has ended).
    mutating func pumpTurnRequested(afterQueuedEventsAt now: Double? = nil) -> DispatcherAction.PumpTurn {
        guard !hasEnded, !timers.pumpTurnScheduled else { return .none }
        timers.pumpTurnScheduled = true
        if let now, timers.lastPumpAt != now { return .afterQueuedEvents }
        return .nextLoopTurn
    }

    // MARK: - The lifecycle

    /// Why the run is ending, once a stop began (nil while it runs to completion).
    var stopCause: Ending? {
        switch state {
        case .sending, .ended: return nil
        case .stopping(let ending, _): return ending
        case .closingTransport(let ending, _, _): return ending
        }
    }

    /// Whether new records may still be read from the reader.
    var readsSource: Bool {
        switch state {
        case .sending(let open): return open
        case .stopping(let ending, let open), .closingTransport(let ending?, let open, _):
            return open && ending != .interrupted
        case .closingTransport(nil, let open, _): return open
        case .ended: return false
        }
    }

    /// Whether the reader still has records (reading may be paused by an interrupt).
    var inputOpen: Bool {
        switch state {
        case .sending(let open), .stopping(_, let open), .closingTransport(_, let open, _): return open
        case .ended: return false
        }
    }

    /// Whether new requests may go out.
    var sends: Bool {
        if case .sending = state { return true }
        return false
    }

    /// Whether the transport was asked to close.
    var closingTransport: Bool {
        switch state {
        case .closingTransport, .ended: return true
        case .sending, .stopping: return false
        }
    }

    var transportClosed: Bool {
        switch state {
        case .closingTransport(_, _, let closed): return closed
        case .ended: return true
        case .sending, .stopping: return false
        }
    }

    var hasEnded: Bool { state == .ended }

    /// The reader has no more records.
    mutating func inputExhausted() {
        switch state {
        case .sending: state = .sending(inputOpen: false)
        case .stopping(let ending, _): state = .stopping(ending, inputOpen: false)
        case .closingTransport(let ending, _, let closed):
            state = .closingTransport(ending, inputOpen: false, closed: closed)
        case .ended: break
        }
    }

    /// Moves to `stopping` (or names the cause while closing); false when a stop already began or the run ended.
    mutating func enterStop(_ ending: Ending) -> Bool {
        switch state {
        case .sending(let open):
            state = .stopping(ending, inputOpen: open)
            return true
        case .closingTransport(nil, let open, let closed):
            state = .closingTransport(ending, inputOpen: open, closed: closed)
            return true
        case .stopping, .closingTransport, .ended:
            return false
        }
    }

    /// Moves to `closingTransport` and has the transport closed now; nothing when it already was asked to.
    mutating func closeTransport(_ action: inout DispatcherAction) {
        switch state {
        case .sending(let open):
            state = .closingTransport(nil, inputOpen: open, closed: false)
        case .stopping(let ending, let open):
            state = .closingTransport(ending, inputOpen: open, closed: false)
        case .closingTransport, .ended:
            return
        }
        action.closeTransport = .now
    }
}
