import APNSCore

/// Something that happened to a running dispatcher, queued until its loop hands it to the machine: a transport
/// callback, one of its own timers, a signal.
enum DispatcherEvent {
    /// `start` was called.
    case start
    /// The pump turn the machine asked for (`DispatcherAction.pumpTurn`) is due.
    case pumpTurn
    /// The wake-up the machine asked for (`wakeUpAfter`) is due.
    case wakeUp
    /// The grace period after a stop is over (`gracePeriodAfter`).
    case gracePeriodEnded
    /// SIGINT/SIGTERM.
    case interrupt
    /// A second SIGINT/SIGTERM.
    case abortInFlight
    /// The transport reported the outcome of the request under `tag`, at `at`.
    case completed(tag: UInt64, outcome: PushOutcome, at: Double)
    /// The transport has free slots.
    case slotsFreed
    /// The transport cannot work at all.
    case transportFailed(any Error)
    /// The transport finished closing.
    case transportClosed
}
