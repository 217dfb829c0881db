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

            EXAMPLES
              apns-bulk replay yesterday.ndjson --results replay.ndjson \\
                --key AuthKey_ABC123DEFG.p8 --key-id ABC123DEFG --team-id DEF123GHIJ
              apns-bulk replay results-*.ndjson --exclude-in-doubt --results again.ndjson

            \(ExitStatus.helpSection(ExitStatus.campaignEntries))
            """
    )

    @Argument(help: ArgumentHelp("Result files of earlier send or replay runs.", valueName: "results"))
    var resultFiles: [String]

    @OptionGroup var output: OutputOptions
    @OptionGroup var authentication: AuthenticationOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var delivery: DeliveryOptions

    @Flag(name: .customLong("exclude-in-doubt"), help: "Leave out in_doubt records (they may have been delivered).")
    var excludeInDoubt = false

    @Flag(name: .customLong("resume"), help: "Finish an interrupted replay recorded in the result file and its journal.")
    var resume = false

    mutating func validate() throws {
        guard !resultFiles.isEmpty else { throw ValidationError("Name at least one result file.") }
        guard !resultFiles.contains(output.results) else { throw ValidationError("--results must be a new file, not one being replayed.") }
    }

    func run() throws {
        let reader = try ReplayReader(resultPaths: resultFiles, includeInDoubt: !excludeInDoubt)
        var client = try connection.clientConfiguration(authentication: authentication)
        var options = SendRunOptions(
            inputs: [], reader: CampaignReaderOptions(defaults: CampaignDefaults()), resultsPath: output.results,
            resultsFormat: output.format)
        options.resume = resume
        options.durable = output.durable
        options.dispatch = delivery.configuration
        client.stopAfterTokensExpiredOnFirstUse = options.dispatch.stopAfterConsecutiveFailures
        try CampaignRunner.run(options, client: client, output: output) { options, engine, progress in
            try SendRun.run(options, reader: reader, inputPaths: reader.inputPaths, engine: engine, progress: progress)
        }
    }
}
