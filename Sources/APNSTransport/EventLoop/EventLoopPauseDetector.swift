/// Tells a pause of the whole process (SIGSTOP, a frozen container, a paused or migrated VM) from the time its
/// loop spent waiting or working, and owns the total paused time the loop's clock leaves out (docs/RUNNING.md,
/// "Paused processes and clock steps").
///
/// The loop reads the monotonic clock at least once a turn and says, before each wait, how long it may sleep.
/// Between two readings it may legitimately spend that wait plus a moment of work; a gap more than `threshold`
/// seconds beyond it means the process did not run, and the whole excess is a pause. The loop's clock is the
/// monotonic clock minus every pause found: it stands still while the process is stopped, so every deadline
/// (timers, and the instants state machines keep: a request's start, the last answer) moves on by the pause
/// instead of falling due at once on waking, before the socket's waiting input has been read.
struct EventLoopPauseDetector: Sendable {
    /// Seconds beyond the allowed wait between two readings that make a pause: well above a busy turn or a
    /// scheduling delay, well below the shortest timeout the loop judges (5 s).
    static let defaultThreshold = 2.0

    let threshold: Double
    /// The time found paused so far, left out of the loop's clock.
    private(set) var pausedNanoseconds: UInt64 = 0
    /// How many pauses were found.
    private(set) var pauses = 0
    private var lastReading: EventLoopInstant?
    /// Seconds the loop may spend before the next reading without it being a pause: its next wait.
    private var allowance: Double = 0

    init(threshold: Double = Self.defaultThreshold) {
        self.threshold = threshold
    }

    /// The loop is about to wait for at most `seconds` (nil: without limit, so any gap up to the next reading is
    /// allowed: nothing is due to be judged).
    mutating func willWait(seconds: Double?) {
        allowance = seconds.map { max(0, $0) } ?? .infinity
    }

    /// The loop's time for a reading of the monotonic clock: `raw` minus every pause, this gap's included.
    mutating func loopTime(at raw: EventLoopInstant) -> EventLoopInstant {
        if let lastReading, raw > lastReading, allowance.isFinite {
            let gap = raw.seconds(since: lastReading)
            if gap - allowance > threshold {
                // The clock moves on by the allowed wait only; the rest was spent stopped.
                let elapsed = raw.nanoseconds - lastReading.nanoseconds
                pausedNanoseconds &+= elapsed - min(elapsed, UInt64(allowance * 1e9))
                pauses += 1
            }
        }
        lastReading = raw
        allowance = 0
        return EventLoopInstant(nanoseconds: raw.nanoseconds - min(pausedNanoseconds, raw.nanoseconds))
    }
}
