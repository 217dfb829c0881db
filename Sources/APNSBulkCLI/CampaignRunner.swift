import APNSCore
import APNSPipeline
import APNSTransport
import ArgumentParser
import Foundation

/// What `send` and `replay` share after parsing: the engine the run turns on (event loop, connection pool,
/// signals), progress, the final summary, summary and metrics files, and the exit status. After `--resume`, the exit status and the outcome counts describe the whole
/// campaign (every final line in the result file), with this run's own figures beside them.
enum CampaignRunner {
    static func run(
        _ options: SendRunOptions,
        client: APNSClientConfiguration,
        output: OutputOptions,
        body: (
            SendRunOptions, _ engine: () throws -> any SendRunEngine, @escaping (CampaignSummary, Int) -> Void
        ) throws -> SendRun.Outcome
    ) throws {
        signal(SIGXFSZ, SIG_IGN)  // past the file-size limit, a write fails (EFBIG) and the run ends cleanly
        let stop = StopSignal()
        let watcher = SignalWatcher(stop)
        let printer = ProgressPrinter(option: output.progress)
        let timeline = TimelineRecorder(startedAt: Date().timeIntervalSince1970)
        let outcome = try withExtendedLifetime(watcher) {
            try body(options, { try EventLoopSendEngine(client: client, signals: stop) }) { summary, inFlight in
                printer.update(summary, inFlight: inFlight, window: summary.inFlightWindow)
                timeline.record(summary, inFlight: inFlight, window: summary.inFlightWindow)
            }
        }
        printer.endLiveDisplay()
        let summary = outcome.summary
        if outcome.tornLinesDropped > 0 {
            FileHandle.standardError.write(Data("apns-bulk: dropped a line torn by the crash before resuming\n".utf8))
        }
        FileHandle.standardError.write(Data((summary.text(resultsPath: options.resultsPath) + "\n").utf8))
        if let path = output.summary {
            let json = timeline.timeline.inserted(intoSummaryJSON: summary.json(connections: client.connectionCount))
            try ReportFile.write(json, to: path)
        }
        if let path = output.metrics {
            try ReportFile.write(Array(summary.prometheus().utf8), to: path)
        }
        if let path = output.report {
            try ReportCommand.writeReport(resultPaths: [options.resultsPath], timelines: [timeline.timeline], html: path)
        }
        if let error = outcome.error {
            FileHandle.standardError.write(Data("apns-bulk: error: \(PrintableText.escaping(String(describing: error)))\n".utf8))
            throw ExitStatus.failure.code
        }
        let status = exitStatus(for: summary)
        if status != .success { throw status.code }
    }

    /// This run's ending, and the whole campaign's final lines.
    static func exitStatus(for summary: CampaignSummary) -> ExitStatus {
        switch summary.ending {
        case .stoppedEarly: return .stoppedEarly
        case .interrupted: return .interrupted
        case .completed:
            let campaign = summary.campaign
            if campaign.leftToRetry > 0 { return .retryableLeft }
            if campaign.count(.inputError) > 0 { return .invalidRecords }
            return .success
        }
    }
}
