import Foundation

/// The sidecar `<results>.campaign` that tells which campaign a result file belongs to and where it stands: the
/// campaign's identity, the command line that ran it, and whether the run is still unfinished or has finished
/// (and how: completed, or stopped early and why). It outlives the run, so running the same command again can
/// do nothing for a finished campaign, continue an unfinished one, and refuse a different one
/// (docs/RUNNING-AGAIN.md).
///
/// Written whole and atomically (a new file renamed over the old), mode 0600: before the result file is created,
/// and again when the run finishes, before the journal is removed.
public struct CampaignManifest: Codable, Sendable, Equatable {
    /// The manifest that goes with a result file.
    public static func path(forResults resultsPath: String) -> String { resultsPath + ".campaign" }

    /// Where the campaign stands.
    public enum State: String, Codable, Sendable {
        /// A run started and has not finished (it may be going on, or it was killed): running again continues it.
        case unfinished
        /// Every record has its final line: running again sends nothing.
        case finished
        /// Stopped early by a campaign-wide cause (credentials, the endpoint, the topic, the environment, the
        /// transport): running the same command again, the cause fixed, continues it (`StoppedCampaign`).
        case stopped
    }

    /// The layout of this file.
    public var version = 1
    /// The campaign's inputs and settings.
    public var identity: CampaignIdentity
    /// The arguments of the run that started the campaign (without the program name), for "run this to finish it"
    /// messages; a proxy's user and password are left out.
    public var arguments: [String]
    /// Whether the campaign has finished.
    public var state: State
    /// Seconds since the epoch.
    public var startedAt: Double
    /// When the campaign finished, in seconds since the epoch; nil while unfinished.
    public var finishedAt: Double?
    /// Why a stopped campaign stopped; nil when it completed.
    public var stoppedEarly: String?
    /// The result file of the `replay` that took over a stopped campaign's unsent records: the campaign is
    /// finished here, and running it again sends nothing (the replay's own command continues the replay).
    public var replayedInto: String?
    /// Where the last run sent: `production`, `development`, or another endpoint's host (`prune` says it beside
    /// each token). Not part of the identity: a stopped campaign is continued against another endpoint. Absent in
    /// records of older apns-bulk versions.
    public var environment: String?
    /// The campaign's `--not-after` deadline, in seconds since the epoch, fixed at its first start (a duration
    /// counted from `startedAt`); every later run of it (the same command, `--resume`) keeps it. Absent when the
    /// campaign has none, and in records of older apns-bulk versions.
    public var notAfter: Double?

    /// Whether the campaign stopped early and can be continued (records written by an apns-bulk that had no
    /// `stopped` state say `finished` with a stop reason).
    public var isStopped: Bool {
        replayedInto == nil && (state == .stopped || (state == .finished && stoppedEarly != nil))
    }

    /// The record of a new, unfinished campaign.
    public init(identity: CampaignIdentity, arguments: [String], startedAt: Double) {
        self.identity = identity
        self.arguments = Self.redacted(arguments)
        self.state = .unfinished
        self.startedAt = startedAt
    }

    /// The manifest beside `resultsPath`, or nil when there is none.
    public static func read(forResults resultsPath: String) throws(PipelineError) -> CampaignManifest? {
        let path = Self.path(forResults: resultsPath)
        guard POSIXFile.exists(path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PipelineError(.openFailed, "\(path): cannot read the campaign record")
        }
        do {
            return try JSONDecoder().decode(CampaignManifest.self, from: data)
        } catch {
            throw PipelineError(
                .campaignRecordInvalid, "\(path): not a campaign record apns-bulk wrote (remove it, or use --overwrite)"
            )
        }
    }

    /// Writes the manifest beside `resultsPath`, replacing any.
    public func write(forResults resultsPath: String) throws(PipelineError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(self) } catch {
            throw PipelineError(.writeFailed, "\(Self.path(forResults: resultsPath)): \(error)")
        }
        try POSIXFile.replaceAtomically(Self.path(forResults: resultsPath), with: Array(data) + [0x0A])
    }

    /// The shell command that runs this campaign again (and so finishes it), words quoted for a POSIX shell.
    public var command: String {
        (["apns-bulk"] + arguments).map(ShellWord.quoted).joined(separator: " ")
    }

    /// The arguments with the user and password of a `--proxy` URL removed.
    public static func redacted(_ arguments: [String]) -> [String] {
        var out = arguments
        for index in out.indices {
            let word = out[index]
            let value: Substring
            let prefix: String
            if word.hasPrefix("--proxy=") {
                prefix = "--proxy="
                value = word.dropFirst(prefix.count)
            } else if index > 0, out[index - 1] == "--proxy" {
                prefix = ""
                value = word[...]
            } else {
                continue
            }
            if let scheme = value.range(of: "://"), let at = value[scheme.upperBound...].firstIndex(of: "@") {
                out[index] = prefix + value[..<scheme.upperBound] + value[value.index(after: at)...]
            }
        }
        return out
    }
}
