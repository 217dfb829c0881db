/// How a run starts, decided from what already stands beside its result path, before any file is created: a new
/// campaign, the continuation of an unfinished one, or nothing at all for a finished one. A different campaign
/// on an existing result file is refused (unless `--overwrite`), naming what differs. No I/O: `Facts` are read
/// by the caller (docs/RUNNING-AGAIN.md has the table).
public enum RunStart: Equatable, Sendable {
    /// Write a new result file and journal (replacing any, with `--overwrite`).
    case fresh
    /// Continue the unfinished run in the result file and journal, as `--resume` does.
    case continueUnfinished
    /// The campaign has finished: send nothing, report it.
    case alreadyFinished(CampaignManifest)
    /// The campaign stopped early: its records that were never accepted are sent again (`StoppedCampaign`), then
    /// it goes on as an unfinished run does.
    case continueStopped(CampaignManifest)

    /// Whether the run continues an earlier one (appending to its result file).
    public var continues: Bool {
        switch self {
        case .continueUnfinished, .continueStopped: return true
        case .fresh, .alreadyFinished: return false
        }
    }

    /// What stands beside the result path.
    public struct Facts: Sendable {
        /// The campaign record, if there is one.
        public var manifest: CampaignManifest?
        /// Whether the result file exists.
        public var resultsExist: Bool
        /// Whether the result file holds any byte.
        public var resultsHoldLines: Bool
        /// Whether the journal holds any byte.
        public var journalHoldsEntries: Bool
        /// A result path beside this one that nothing stands at yet (`freeResultsPath(besides:taken:)`), for the
        /// command a refusal proposes.
        public var freeResultsPath: String?

        /// A start from its parts.
        public init(
            manifest: CampaignManifest?, resultsExist: Bool, resultsHoldLines: Bool, journalHoldsEntries: Bool,
            freeResultsPath: String? = nil
        ) {
            self.manifest = manifest
            self.resultsExist = resultsExist
            self.resultsHoldLines = resultsHoldLines
            self.journalHoldsEntries = journalHoldsEntries
            self.freeResultsPath = freeResultsPath
        }
    }

    /// Decides. `identity` is this run's campaign (nil: not compared, as for standard output); `resume` is
    /// `--resume`, `overwrite` is `--overwrite`.
    public static func decide(
        _ facts: Facts, resultsPath: String, identity: CampaignIdentity?, resume: Bool, overwrite: Bool
    ) throws(PipelineError) -> RunStart {
        if overwrite { return .fresh }
        let journalPath = SendJournal.path(forResults: resultsPath)
        let hasRun = facts.resultsHoldLines || facts.journalHoldsEntries
        guard let manifest = facts.manifest else {
            if resume { return hasRun ? .continueUnfinished : .fresh }  // nothing to continue: it starts, and says so
            if facts.journalHoldsEntries {
                throw PipelineError(
                    .unfinishedRun,
                    "\(resultsPath) belongs to an unfinished run (\(journalPath) "
                        + "exists): add --resume to finish it, or remove both files to start over")
            }
            if facts.resultsHoldLines {
                throw PipelineError(
                    .campaignChanged,
                    "\(resultsPath) holds results, but no record of their campaign "
                        + "(\(CampaignManifest.path(forResults: resultsPath)) is missing): add --resume to finish that "
                        + "campaign, or --overwrite to replace the file")
            }
            return .fresh
        }
        if let identity {
            // A stopped campaign may be continued with the setting that stopped it changed (a topic, a push type).
            let fixes =
                manifest.isStopped ? StoppedCampaign.Cause(reason: manifest.stoppedEarly ?? "").settingsItFixes : []
            let differences = identity.differences(from: manifest.identity, ignoring: fixes)
            if !differences.isEmpty {
                let what =
                    manifest.isStopped ? "a stopped" : manifest.state == .unfinished ? "an unfinished" : "a finished"
                throw PipelineError(
                    .campaignChanged,
                    "\(resultsPath) holds \(what) campaign that is not this one: "
                        + differences.joined(separator: "; ") + ". "
                        + refusalAdvice(identity: identity, manifest: manifest, resultsPath: resultsPath, facts: facts))
            }
        }
        if manifest.isStopped {
            guard facts.resultsExist else {
                throw PipelineError(
                    .campaignChanged,
                    "this campaign stopped early, but its result file \(resultsPath) "
                        + "is gone: add --overwrite to send it all again")
            }
            return .continueStopped(manifest)
        }
        switch manifest.state {
        case .finished, .stopped:
            guard facts.resultsExist else {
                throw PipelineError(
                    .campaignChanged,
                    "this campaign finished, but its result file \(resultsPath) is gone: "
                        + "add --overwrite to send it all again")
            }
            return .alreadyFinished(manifest)
        case .unfinished:
            return hasRun ? .continueUnfinished : .fresh
        }
    }
}
