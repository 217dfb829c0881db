/// The campaign's `--not-after` deadline as the dispatcher keeps it: the instant after which it sends nothing new,
/// in its scheduler's clock, and how result lines and the summary name it. Records not sent by then end `expired`
/// (docs/RUNNING-AGAIN.md, "The deadline").
public struct SendDeadline: Sendable, Equatable {
    /// The instant, in the scheduler's (monotonic) seconds.
    public var at: Double
    /// The deadline as an ISO-8601 instant, for result lines and the summary.
    public var text: String

    /// A deadline at `at` seconds since the epoch; `text` is how it was given, for messages.
    public init(at: Double, text: String) {
        self.at = at
        self.text = text
    }
}
