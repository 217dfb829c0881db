import APNSCore

/// What the dispatcher does after one event of its `DispatcherStateMachine`, run in the order of the fields. A
/// plain value with no array on the hot path (an answer is one write and one pump turn), so deciding costs no
/// allocation. The writes and the sink's flush can fail: a failure ends the run (`runFailed`), and the writes and
/// flushes that follow it in the same action are not done; its timers, close and end's report still are.
struct DispatcherAction {
    /// One write to the result sink.
    enum RecordWrite {
        /// Write this final line (the machine counts it as it is written: `countFinalResult`).
        case finalResult(ResultRecord)
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
    /// Pump again, and when.
    var pumpTurn = PumpTurn.none
    /// Wake the loop (a pump turn) after this many seconds.
    var wakeUpAfter: Double?
    /// End the grace period for requests in flight after this many seconds (`gracePeriodEnded`).
    var gracePeriodAfter: Double?
    /// Tell the machine the `--not-after` deadline has come after this many seconds (`deadlinePassed`).
    var deadlineAfter: Double?
    var closeTransport = TransportClose.no
    /// The run has ended: flush the sink and report the end (`Dispatcher`'s `onEnd`).
    var reportEnd = false

    /// Adds `more` after the writes it holds.
    mutating func append(_ more: [RecordWrite]) {
        guard !more.isEmpty else { return }
        switch writes {
        case .none: writes = .many(more)
        case .one(let write): writes = .many([write] + more)
        case .many(let all): writes = .many(all + more)
        }
    }

    /// Whether it does nothing at all.
    var isEmpty: Bool {
        if case .none = writes, thenStop == nil, !flushSink, !flushTransport, pumpTurn == .none, wakeUpAfter == nil,
            gracePeriodAfter == nil, deadlineAfter == nil, closeTransport == .no, !reportEnd
        {
            return true
        }
        return false
    }
}
