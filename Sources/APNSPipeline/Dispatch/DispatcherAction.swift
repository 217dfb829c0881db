import APNSCore

/// What the dispatcher does after one event of its `DispatcherStateMachine`, run in the order of the fields: the
/// one action value every event returns, empty when there is nothing to do. A plain value with no array on the hot
/// path (an answer is one write and one pump turn, a record read one write or one send to submit), so deciding
/// costs no allocation. The writes, the sink's flush and the pump step can fail: a failure ends the run
/// (`runFailed`), and the writes, flushes and pump step that follow it in the same action are not done; its
/// timers, close and end's report still are.
struct DispatcherAction {
    /// One write to the result sink.
    enum RecordWrite {
        /// Write this final line (the machine counted it as it decided it, and put the record's kept values in).
        /// Boxed: inline, the line made every action it rides in large, and each move of one a `memcpy` call; in a
        /// class the sink reads it in place, where an `indirect` case copied it out of its box to write it.
        case finalResult(FinalLine)
        /// Journal the record as safe to send again.
        case journalRetryable(RecordKey)
    }

    /// The writes to do first.
    enum RecordWrites {
        case none
        case one(RecordWrite)
        /// The writes a stop does for the sends that were waiting (a retry's back-off, a resend).
        case many([RecordWrite])
    }

    /// When the next pump turn runs.
    enum PumpTurn: Equatable {
        case none
        /// Once the events queued now are handled, in the same loop turn: slots freed by answers are refilled in
        /// the turn that read the answers, as many as that turn brought.
        case afterQueuedEvents
        /// On the next loop turn (the network gets its turn first).
        case nextLoopTurn
    }

    /// The next step of the pump turn under way, done after the rest of the action; each leads to the event named.
    enum PumpStep {
        /// None: no pump turn is under way, or its step is still to come from another event.
        case none
        /// Journal this send as sent and hand its notification to the transport under the action's `submitTag`
        /// (a relative expiration resolved first, on the wall clock), then `submitted(_:tag:now:)` with it. The tag
        /// is a field of its own so that the step stays within the 128 bytes Swift moves without a `memcpy` call.
        case submit(PendingSend)
        /// Read the next record: `recordRead` with it, or `inputExhausted` when the reader has none.
        case readRecord
        /// The turn is done reading and sending: once the sink is flushed (`flushSink`, in the same action),
        /// `pumpTurnEnded` with the transport's free slots.
        case endTurn
    }

    /// How the transport is closed.
    enum TransportClose: Equatable {
        case no
        /// Close it now: what it still holds comes back (never sent: `notSent`; sent: `answerLost`), then
        /// `transportClosed`.
        case now
        /// Flush the sink first, ignoring a failure (the work is done; the end's flush reports it), then close.
        case afterFlushingSink
    }

    var writes = RecordWrites.none
    /// A stop that begins once `writes` succeeded (an answer that stops the campaign): the machine hears
    /// `stop(_:)`, and its action runs before the rest of this one.
    var thenStop: CampaignSummary.Ending?
    /// Flush the sink (result lines, then the journal).
    var flushSink = false
    /// Hand what was submitted this turn to the network (after the sink's flush: journal before network).
    var flushTransport = false
    /// Tell the transport, before it flushes, how many requests the window may keep in flight (its reach changed).
    var expectInFlight: Int?
    /// Pump again, and when.
    var pumpTurn = PumpTurn.none
    /// Wake the loop (a pump turn) after this many seconds.
    var wakeUpAfter: Double?
    /// End the grace period for requests in flight after this many seconds (`gracePeriodEnded`).
    var gracePeriodAfter: Double?
    /// Tell the machine the `--not-after` deadline has come after this many seconds (`deadlinePassed`).
    var deadlineAfter: Double?
    var closeTransport = TransportClose.no
    /// The run has ended: report the end (`Dispatcher`'s `onEnd`) with the machine's summary (`report`) and the
    /// failure that ended the run (`runFailure`), after the sink's last flush (`flushSink`).
    var reportEnd = false
    /// What the pump turn does next (last: after the writes and flushes this action does).
    var pumpStep = PumpStep.none
    /// The tag a `submit` step's send goes under.
    var submitTag: UInt64 = 0

    /// Adds `more` after the writes it holds.
    mutating func append(_ more: [RecordWrite]) {
        guard !more.isEmpty else { return }
        switch writes {
        case .none: writes = .many(more)
        case .one(let write): writes = .many([write] + more)
        case .many(let all): writes = .many(all + more)
        }
    }

    /// Takes the pump step out, leaving `none`: the send it may hold moves out without a copy.
    mutating func takePumpStep() -> PumpStep {
        var step = PumpStep.none
        swap(&step, &pumpStep)
        return step
    }

    /// Whether it does nothing but its pump step (which may be `none`).
    var doesOnlyItsPumpStep: Bool {
        if case .none = writes, thenStop == nil, !flushSink, !flushTransport, expectInFlight == nil, pumpTurn == .none,
            wakeUpAfter == nil,
            gracePeriodAfter == nil, deadlineAfter == nil, closeTransport == .no, !reportEnd
        {
            return true
        }
        return false
    }

    /// Whether it does nothing at all.
    var isEmpty: Bool {
        guard doesOnlyItsPumpStep, case .none = pumpStep else { return false }
        return true
    }
}

/// One final result line on its way from the machine to the sink: a box, so that the action carrying it stays small
/// and the sink writes the line where it is.
final class FinalLine {
    let record: ResultRecord

    init(_ record: consuming ResultRecord) {
        self.record = record
    }
}
