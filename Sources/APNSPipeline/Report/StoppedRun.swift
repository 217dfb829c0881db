/// A result file whose campaign stopped early and can be continued (`CampaignManifest.isStopped`): why it stopped,
/// what to check, and the campaign's own command with the cause fixed, which `report` proposes in place of a
/// `replay` (a stopped campaign is finished by running it again, docs/RUNNING-AGAIN.md "A stop is not a finish").
public struct StoppedRun: Sendable, Equatable {
    /// The stopped campaign's result file.
    public var resultsPath: String
    /// The stop reason the campaign record holds.
    public var why: String
    /// What to check, ending with the words that introduce `command`.
    public var advice: String
    /// The command that continues the campaign.
    public var command: String

    /// A stopped run: why it stopped, what to fix, and the command that finishes it.
    public init(resultsPath: String, why: String, advice: String, command: String) {
        self.resultsPath = resultsPath
        self.why = why
        self.advice = advice
        self.command = command
    }
}
