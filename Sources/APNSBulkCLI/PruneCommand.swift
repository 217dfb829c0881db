import APNSCore
import APNSPipeline
import ArgumentParser
import Foundation

/// `apns-bulk prune`: the tokens to delete from a token database, from result files.
struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "List the dead tokens in result files: 410 Unregistered/ExpiredToken, BadDeviceToken, DeviceTokenNotForTopic.",
        usage: "apns-bulk prune <results> ... [--format <format>] [<options>]",
        discussion: """
            Tokens are deduplicated across files; for 410s the latest timestamp is kept (milliseconds since the \
            epoch at which APNs last confirmed the token was invalid: a token your app registered after that is \
            still good, so compare before deleting). --after keeps only 410 tokens whose timestamp is later; \
            BadDeviceToken and DeviceTokenNotForTopic have no timestamp and are always listed.

            EXAMPLES
              apns-bulk prune results.ndjson > dead-tokens.txt
              apns-bulk prune results-*.ndjson --format csv --output prune.csv

            \(ExitStatus.helpSection(ExitStatus.pruneEntries))
            """
    )

    @Argument(help: ArgumentHelp("Result files of send or replay runs.", valueName: "results"),
              completion: ValueCompletion.resultFiles)
    var resultFiles: [String]

    @Option(name: .customLong("format"), help: "text (one token per line), csv (token,reason,timestamp) or ndjson.",
            completion: ValueCompletion.pruneFormats)
    var format: String = "text"

    @Option(name: .customLong("output"), help: ArgumentHelp("Write here instead of standard output.", valueName: "file"),
            completion: ValueCompletion.anyFile)
    var outputPath: String?

    @Option(name: .customLong("after"), help: ArgumentHelp("Keep only 410 tokens whose timestamp (ms since the epoch) is later.", valueName: "ms"))
    var after: Int64?

    mutating func validate() throws {
        guard !resultFiles.isEmpty else { throw ValidationError("Name at least one result file.") }
        guard PruneList.OutputFormat(rawValue: format) != nil else { throw ValidationError("--format must be text, csv or ndjson.") }
    }

    func run() throws {
        if let outputPath {  // never one of the result files read, and writable where it is named
            try CampaignRunner.reportingStartFailure { () throws(PipelineError) in
                try OutputPathCheck.checkOutput(outputPath, option: "--output", reading: resultFiles)
            }
        }
        var list = PruneList()
        try list.add(resultsAt: resultFiles)
        let entries = list.entries(after: after)
        let outputFormat = PruneList.OutputFormat(rawValue: format) ?? .text
        if let outputPath {
            try PruneList.write(entries, format: outputFormat, toPath: outputPath)
        } else {
            try PruneList.write(entries, format: outputFormat, to: StandardOutputSink())
        }
        for torn in list.tornLines { FileHandle.standardError.write(Data("apns-bulk: skipped a torn last line: \(torn)\n".utf8)) }
        for path in resultFiles {
            if let manifest = try? CampaignManifest.read(forResults: path), manifest.isStopped {
                let line = "apns-bulk: \(path) stopped early (\(manifest.stoppedEarly ?? "")): the list holds the tokens "
                    + "answered before the stop; its own command, the cause fixed, continues it: \(manifest.command)"
                FileHandle.standardError.write(Data((PrintableText.escaping(line) + "\n").utf8))
            }
            guard let run = UnfinishedRun.find(resultsPath: path) else { continue }
            FileHandle.standardError.write(Data("apns-bulk: the list holds the tokens answered so far; \(run.message)\n".utf8))
        }
        if list.heldBack > 0 {
            let line = "apns-bulk: held back \(list.heldBack) tokens called bad (BadDeviceToken, DeviceTokenNotForTopic) in a "
                + "run that accepted no token of their topic: the endpoint or the topic may have been wrong, not the tokens\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
        FileHandle.standardError.write(Data("\(entries.count) tokens to prune\n".utf8))
    }
}

// MARK: - StandardOutputSink

/// Standard output as a `ByteSink`, for commands that print data (`prune`).
final class StandardOutputSink: ByteSink {
    func write(_ bytes: [UInt8], count: Int) throws(PipelineError) {
        FileHandle.standardOutput.write(Data(bytes[0..<count]))
    }
}
