import APNSCore
import APNSPipeline
import ArgumentParser
import Foundation

/// `apns-bulk prune`: the tokens to delete from a token database, from result files.
struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract:
            "List the dead tokens in result files: 410 Unregistered/ExpiredToken, BadDeviceToken, DeviceTokenNotForTopic.",
        usage: "apns-bulk prune <results> ... [--format <format>] [<options>]",
        discussion: """
            Tokens are deduplicated across files (per topic and environment); for 410s the latest timestamp is \
            kept (milliseconds since the epoch at which APNs last confirmed the token was invalid: a token your \
            app registered after that is still good, so compare before deleting). --after keeps only 410 tokens \
            whose timestamp is later; BadDeviceToken and DeviceTokenNotForTopic have no timestamp.

            Only what APNs confirmed is listed: a token called bad (BadDeviceToken, DeviceTokenNotForTopic) only \
            when its result file also holds a token of its topic delivered or answered 410, so the endpoint and the \
            topic were right; the others are held back (one line on standard error says how many) unless \
            --include-unconfirmed is given.

            csv and ndjson rows say where each token comes from: \(PruneList.csvHeader) (docs/FILES.md). \
            samples/cron/cleanup-postgresql.sql and cleanup-sqlite.sql delete them from a token table.

            EXAMPLES
              apns-bulk prune results-*.ndjson --format csv --output prune.csv
              apns-bulk prune results.ndjson --after 2026-01-01 > dead-tokens.txt

            \(ExitStatus.helpSection(ExitStatus.pruneEntries))
            """
    )

    @Argument(
        help: ArgumentHelp("Result files of send or replay runs.", valueName: "results"),
        completion: ValueCompletion.resultFiles)
    var resultFiles: [String]

    @Option(
        name: .customLong("format"), help: "text (one token per line), csv (token,reason,timestamp) or ndjson.",
        completion: ValueCompletion.pruneFormats)
    var format: String = "text"

    @Option(
        name: .customLong("output"), help: ArgumentHelp("Write here instead of standard output.", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var outputPath: String?

    @Option(
        name: .customLong("after"),
        help: ArgumentHelp(
            "Keep only 410 tokens whose timestamp is later: milliseconds since the epoch, or ISO 8601 (2026-01-01, 2026-01-01T08:00:00Z).",
            valueName: "time"))
    var after: String?

    @Flag(
        name: .customLong("include-unconfirmed"),
        help: "List tokens called bad also when nothing in their result file confirmed their topic and environment.")
    var includeUnconfirmed = false

    mutating func validate() throws {
        guard !resultFiles.isEmpty else { throw ValidationError("Name at least one result file.") }
        guard PruneList.OutputFormat(rawValue: format) != nil else {
            throw ValidationError("--format must be text, csv or ndjson.")
        }
        if let after, MillisecondTime.parse(after) == nil {
            throw ValidationError(
                "--after must be milliseconds since the epoch or an ISO 8601 date or time with a zone (2026-01-01, 2026-01-01T08:00:00Z), not '\(PrintableText.escaping(after))'."
            )
        }
    }

    func run() throws {
        if let outputPath {  // never one of the result files read, and writable where it is named
            try CampaignRunner.reportingStartFailure { () throws(PipelineError) in
                try OutputPathCheck.checkOutput(outputPath, option: "--output", reading: resultFiles)
            }
        }
        var list = PruneList()
        list.includeUnconfirmed = includeUnconfirmed
        try list.add(resultsAt: resultFiles)
        let entries = list.entries(after: after.flatMap(MillisecondTime.parse))
        let outputFormat = PruneList.OutputFormat(rawValue: format) ?? .text
        if let outputPath {
            try PruneList.write(entries, format: outputFormat, toPath: outputPath)
        } else {
            try PruneList.write(entries, format: outputFormat, to: StandardOutputSink())
        }
        for torn in list.tornLines { StandardStream.error("apns-bulk: skipped a torn last line: \(torn)\n") }
        for path in resultFiles {
            if let manifest = try? CampaignManifest.read(forResults: path), manifest.isStopped {
                let line =
                    "apns-bulk: \(path) stopped early (\(manifest.stoppedEarly ?? "")): the list holds the tokens "
                    + "answered before the stop; its own command, the cause fixed, continues it: \(manifest.command)"
                StandardStream.error(PrintableText.escaping(line) + "\n")
            }
            guard let run = UnfinishedRun.find(resultsPath: path) else { continue }
            StandardStream.error("apns-bulk: the list holds the tokens answered so far; \(run.message)\n")
        }
        if list.heldBack > 0 {
            let what = includeUnconfirmed ? "listed, as --include-unconfirmed asks," : "held back"
            let line =
                "apns-bulk: \(what) \(CountedNoun.text(list.heldBack, "token")) called bad (BadDeviceToken, DeviceTokenNotForTopic) that "
                + "nothing confirmed: no token of their topic was delivered or answered 410 in their result file, so the "
                + "endpoint (environment) or the topic may have been wrong, not the tokens"
                + (includeUnconfirmed ? "\n" : "; --include-unconfirmed lists them\n")
            StandardStream.error(line)
        }
        StandardStream.error(CountedNoun.text(entries.count, "token") + " to prune\n")
    }
}

// MARK: - StandardOutputSink

/// Standard output as a `ByteSink`, for commands that print data (`prune`).
final class StandardOutputSink: ByteSink {
    func write(_ bytes: [UInt8], count: Int) throws(PipelineError) {
        guard StandardStream.output(bytes: bytes[0..<count]) else {
            throw PipelineError(.writeFailed, "standard output: the program reading it has closed it")
        }
    }
}
