import APNSCore
import APNSPipeline
import ArgumentParser
import Foundation

/// `apns-bulk report`: one campaign's figures from the result files of one run or of all its shards, as a
/// self-contained HTML page and optionally JSON.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Build one campaign report from result files (one run, or every shard of one).",
        usage: "apns-bulk report <results> ... [--summary <file> ...] [<options>]",
        discussion: """
            Reads every result line and counts records, outcomes by reason, tokens to prune, retryable, in-doubt \
            and not-sent records (with the exact replay command to run next), duplicates and attempts. With the \
            runs' --summary files (written by send --summary), it also draws throughput, latency (p50/p99) and \
            requests in flight over time, shards lined up by their start times. Given a campaign's result file \
            with its replays (in any order, or by a glob), each record counts once, by its latest line (a \
            delivered line always), and the replay command names them all.

            The HTML page is one file: inline CSS and SVG, no script, nothing fetched; it prints well.

            EXAMPLES
              apns-bulk report results.ndjson --summary summary.json --html report.html
              apns-bulk report results-*.ndjson --summary summary-*.json --html c.html
              apns-bulk report results-*.ndjson --json campaign.json

            \(ExitStatus.helpSection(ExitStatus.reportEntries))
            """
    )

    @Argument(
        help: ArgumentHelp("Result files of send or replay runs (all shards of a campaign).", valueName: "results"),
        completion: ValueCompletion.resultFiles)
    var resultFiles: [String]

    @Option(
        name: .customLong("summary"), parsing: .upToNextOption,
        help: ArgumentHelp(
            "Summary files of the same runs (send --summary), for the charts over time.", valueName: "file"),
        completion: ValueCompletion.json)
    var summaries: [String] = []

    @Option(
        name: .customLong("html"), help: ArgumentHelp("Write the HTML report here.", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var html: String?

    @Option(
        name: .customLong("json"), help: ArgumentHelp("Write the figures as JSON here.", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var json: String?

    @Option(name: .customLong("title"), help: "The report's title.")
    var title = "apns-bulk campaign report"

    mutating func validate() throws {
        guard !resultFiles.isEmpty else { throw ValidationError("Name at least one result file.") }
        guard html != nil || json != nil else {
            throw ValidationError("Name an output: --html FILE, --json FILE or both.")
        }
    }

    func run() throws {
        // The outputs first: never a file read here, each writable where it is named.
        let outputs = [("--html", html), ("--json", json)].compactMap { option, path in
            path.map { (option: option, path: $0) }
        }
        try CampaignRunner.reportingStartFailure { () throws(PipelineError) in
            for output in outputs {
                try OutputPathCheck.checkOutput(output.path, option: output.option, reading: resultFiles + summaries)
            }
            try OutputPathCheck.checkDistinct(outputs)
        }
        var report = CampaignReport()
        do {
            try report.addResults(atPaths: resultFiles)
            report.stopped = StopHint.stoppedRuns(resultPaths: resultFiles)
            report.connectionArguments = ConnectionWords.words(forResults: resultFiles)
            for path in summaries { try report.addSummary(atPath: path) }
        } catch {
            StandardStream.error(message: "\(error)")
            throw ExitStatus.failure.code
        }
        try Self.write(report, html: html, json: json, title: title)
        for torn in report.tornLines { StandardStream.error("apns-bulk: skipped a torn last line: \(torn)\n") }
        for run in report.unfinished { StandardStream.error("apns-bulk: \(run.message)\n") }
        for run in report.stopped {
            let line = "apns-bulk: \(run.resultsPath) stopped early (\(run.why)); \(run.advice): \(run.command)"
            StandardStream.error(PrintableText.escaping(line) + "\n")
        }
        var line =
            CountedNoun.text(report.records, "record") + ", \(report.count(.delivered)) delivered, "
            + CountedNoun.text(report.tokensToPrune, "token") + " to prune, "
        line += "\(report.replayableTotal) to replay"
        if let path = html { line += "; report: \(path)" }
        StandardStream.error(line + "\n")
    }

    /// The report of a run that just ended (`send --report`, `replay --report`).
    static func writeReport(resultPaths: [String], timelines: [CampaignTimeline], html: String) throws {
        var report = CampaignReport()
        do {
            try report.addResults(atPaths: resultPaths)
            report.stopped = StopHint.stoppedRuns(resultPaths: resultPaths)
            report.connectionArguments = ConnectionWords.words(forResults: resultPaths)
        } catch {
            StandardStream.error(message: "cannot write the report: \(error)")
            throw ExitStatus.failure.code
        }
        for timeline in timelines where !timeline.samples.isEmpty { report.add(timeline) }
        try write(report, html: html, json: nil, title: "apns-bulk campaign report")
    }

    private static func write(_ report: CampaignReport, html: String?, json: String?, title: String) throws {
        var path = html ?? json ?? ""
        do {
            if let html {
                let page = CampaignReportHTML(report: report, title: title).render()
                try Data(page.utf8).write(to: URL(fileURLWithPath: html))
            }
            if let json {
                path = json
                try Data(report.json()).write(to: URL(fileURLWithPath: json))
            }
        } catch {
            StandardStream.error(message: "cannot write the report \(path): \(error.localizedDescription)")
            throw ExitStatus.failure.code
        }
    }
}
