import APNSCore
import APNSPipeline
import APNSTransport
import ArgumentParser
import Foundation

/// `apns-bulk replay`: sends again exactly the records of earlier runs that ended retryable, not_sent or in
/// doubt, rebuilt from the result files alone.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Re-send exactly the retryable failures of earlier runs, from their result files alone.",
        discussion: """
            Takes every result line whose outcome is retryable (429, 5xx, retries used up), not_sent (a stopped \
            campaign) or in_doubt (timeouts, lost connections, crashes; leave them out with --exclude-in-doubt), \
            rebuilds its notification from the line (token, topic, push type, priority, expiration, collapse id, \
            apns-id, payload) and sends it again. Delivered, pruned, invalid and duplicate records are never \
            sent. The new result file names the original input file and line of each record.

            --topic and --push-type replace every replayed record's own, to finish a campaign stopped by a wrong \
            one: the requests APNs rejected for that setting (BadTopic, TopicDisallowed, MissingTopic; \
            InvalidPushType) are sent again too. Credentials and --endpoint can be changed the same way.

            RUNNING AGAIN
            The replay's result file records which result files it replays (by content) and its settings: the \
            same replay run again sends nothing once it has finished and continues it while it is unfinished; \
            another replay on the same result file is refused unless --overwrite is given. Given a campaign's \
            result file with its replays (in any order, or by a glob), a record's latest line counts, and a \
            delivered line always: nothing a replay delivered is sent again. This replay's own result file, when \
            a glob names it too, is left out of its inputs.

            A replay keeps the --not-after deadline of the campaigns it replays (the earliest): past it, it sends \
            nothing and its records end expired (exit status 6). Given its own --not-after, it also sends the \
            records the old deadline expired.

            EXAMPLES
              apns-bulk replay yesterday.ndjson --results replay.ndjson \\
                --key AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ
              apns-bulk replay results-*.ndjson --exclude-in-doubt --results again.ndjson
              apns-bulk replay stopped.ndjson --topic com.example.app --results fixed.ndjson
              apns-bulk replay late.ndjson --not-after 2h --results later.ndjson

            \(ExitStatus.helpSection(ExitStatus.campaignEntries))
            """
    )

    @Argument(
        help: ArgumentHelp("Result files of earlier send or replay runs.", valueName: "results"),
        completion: ValueCompletion.resultFiles)
    var resultFiles: [String]

    @OptionGroup var output: OutputOptions
    @OptionGroup var sending: SendingOptions

    @Flag(name: .customLong("exclude-in-doubt"), help: "Leave out in_doubt records (they may have been delivered).")
    var excludeInDoubt = false

    @Option(
        name: .customLong("topic"),
        help: ArgumentHelp(
            "Send every replayed record with this apns-topic (a campaign stopped by a wrong topic).", valueName: "topic"
        ))
    var topic: String?

    @Option(
        name: .customLong("push-type"),
        help: ArgumentHelp(
            "Send every replayed record with this apns-push-type (a campaign stopped by a wrong push type).",
            valueName: "type"),
        completion: ValueCompletion.pushTypes)
    var pushType: String?

    @Flag(
        name: .customLong("resume"),
        help:
            "Finish an interrupted replay recorded in the result file and its journal (the same command does it on its own)."
    )
    var resume = false

    mutating func validate() throws {
        guard !resultFiles.isEmpty else { throw ValidationError("Name at least one result file.") }
        guard resultFiles.contains(where: { !isOwnResults($0) }) else {
            throw ValidationError("--results must be a new file, not the only one being replayed.")
        }
        guard !(resume && output.overwrite) else {
            throw ValidationError("--resume continues a result file, --overwrite replaces it: give one.")
        }
        try output.validateStandardOutput(resume: resume)
        _ = try overrides()
    }

    func run() throws {
        let overrides = try self.overrides()
        let resultFiles = replayedFiles()
        // A new deadline given: the records the old one expired are sent too.
        let newDeadline = sending.delivery.notAfter != nil
        let reader = try ReplayReader(
            resultPaths: resultFiles, includeInDoubt: !excludeInDoubt, includeExpired: newDeadline, overrides: overrides
        )
        var readerOptions = CampaignReaderOptions(defaults: CampaignDefaults())
        readerOptions.keep = Self.keptFields(of: resultFiles)
        try sending.runCampaign(
            inputs: [], reading: resultFiles, reader: readerOptions, output: output,
            resume: resume, topic: topic, identity: { try identity(replaying: resultFiles, overrides: overrides) }
        ) { options, engine, progress, onStart in
            var options = options
            options.replayedResults = resultFiles  // a stopped campaign replayed here is finished by this replay
            options.inheritedNotAfter = Self.deadline(of: resultFiles)
            return try SendRun.run(
                options, reader: reader, inputPaths: reader.inputPaths, engine: engine, progress: progress,
                onStart: onStart)
        }
    }

    /// The replay these options describe, for the result file's campaign record: the result files it replays by
    /// content and the settings that change what is sent.
    private func identity(replaying resultFiles: [String], overrides: ReplayReader.Overrides) throws -> CampaignIdentity
    {
        var settings = ["--results-format": output.format.rawValue]
        settings["--topic"] = overrides.topic?.value
        settings["--push-type"] = overrides.pushType?.rawValue
        if excludeInDoubt { settings["--exclude-in-doubt"] = "" }
        if sending.delivery.allowDuplicates { settings["--allow-duplicates"] = "" }
        settings["--keep"] = Self.keptFields(of: resultFiles)?.optionValue
        return CampaignIdentity(
            command: "replay", inputs: try resultFiles.map(CampaignIdentity.Input.reading), settings: settings)
    }

    /// The fields the replayed campaigns kept (`--keep` in their campaign records, in order, each once): a
    /// replay's lines carry the values its records' lines had, and a CSV result file has a column for each.
    static func keptFields(of resultFiles: [String]) -> KeptFields? {
        var names: [String] = []
        for path in resultFiles {
            guard let manifest = try? CampaignManifest.read(forResults: path),
                let keep = manifest.identity.settings["--keep"]
            else { continue }
            for name in keep.split(separator: ",").map(String.init) where !names.contains(name) { names.append(name) }
        }
        let fields = KeptFields(checkedNames: names)
        return fields.names.isEmpty ? nil : fields
    }

    /// The earliest `--not-after` deadline the replayed campaigns' records hold (seconds since the epoch), which a
    /// replay keeps unless given a new one; nil when none has one.
    static func deadline(of resultFiles: [String]) -> Double? {
        resultFiles.compactMap { path in (try? CampaignManifest.read(forResults: path))??.notAfter }.min()
    }

    /// The result files to replay: those named, less the replay's own result file (by name or as the same file),
    /// which a glob such as `replay results-*.ndjson --results results-replay.ndjson` matches from its second run
    /// on. Left out with a note, the same command stays the same campaign: finished, it sends nothing.
    private func replayedFiles() -> [String] {
        resultFiles.filter { path in
            guard isOwnResults(path) else { return true }
            StandardStream.error(
                "apns-bulk: \(PrintableText.escaping(path)) is this replay's own result file: left out of its inputs\n")
            return false
        }
    }

    /// Whether `path` is this replay's own result file from an earlier run: the `--results` file (by path or
    /// inode) whose campaign record is a replay's. Any other file that is both an input and `--results` (a send's
    /// result file named twice) is refused by the output check, never dropped and overwritten.
    private func isOwnResults(_ path: String) -> Bool {
        guard (try? CampaignManifest.read(forResults: output.results))??.identity.command == "replay" else {
            return false
        }
        if path == output.results { return true }
        var named = stat()
        var own = stat()
        guard stat(path, &named) == 0, stat(output.results, &own) == 0 else { return false }
        return named.st_dev == own.st_dev && named.st_ino == own.st_ino
    }

    /// `--topic` and `--push-type`, checked like a campaign's defaults: a bad value is a usage error naming its option.
    private func overrides() throws -> ReplayReader.Overrides {
        var overrides = ReplayReader.Overrides()
        if let topic {
            do { overrides.topic = try Topic(validating: topic) } catch {
                throw ValidationError("--topic: \(error.detail)")
            }
        }
        if let pushType {
            do { overrides.pushType = try PushType(parsing: pushType) } catch {
                throw ValidationError("--push-type: \(error.detail)")
            }
        }
        return overrides
    }
}
