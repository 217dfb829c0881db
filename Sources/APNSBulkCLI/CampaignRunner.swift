import APNSCore
import APNSPipeline
import ArgumentParser
import Foundation

/// What `send` and `replay` share after parsing: signals, progress, the final summary, summary and metrics
/// files, and the exit status.
enum CampaignRunner {
    static func run(
        _ options: SendRunOptions,
        output: OutputOptions,
        body: (SendRunOptions, StopSignal, @escaping (DispatchSummary, Int) -> Void) throws -> SendRun.Outcome
    ) throws {
        let stop = StopSignal()
        let watcher = SignalWatcher(stop)
        let printer = ProgressPrinter(option: output.progress)
        let timeline = TimelineRecorder(startedAt: Date().timeIntervalSince1970)
        let outcome = try withExtendedLifetime(watcher) {
            try body(options, stop) { summary, inFlight in
                printer.update(summary, inFlight: inFlight)
                timeline.record(summary, inFlight: inFlight)
            }
        }
        printer.finish()
        let summary = outcome.summary
        if outcome.tornLinesDropped > 0 {
            FileHandle.standardError.write(Data("apns-bulk: dropped a line torn by the crash before resuming\n".utf8))
        }
        FileHandle.standardError.write(Data((summary.text(resultsPath: options.resultsPath) + "\n").utf8))
        if let path = output.summary {
            let json = timeline.timeline.inserted(intoSummaryJSON: summary.json(connections: options.client.connectionCount))
            try Data(json).write(to: URL(fileURLWithPath: path))
        }
        if let path = output.metrics {
            try Data(summary.prometheus().utf8).write(to: URL(fileURLWithPath: path))
        }
        if let path = output.report {
            try ReportCommand.writeReport(resultPaths: [options.resultsPath], timelines: [timeline.timeline], html: path)
        }
        if let error = outcome.error {
            FileHandle.standardError.write(Data("apns-bulk: error: \(error)\n".utf8))
            throw ExitStatus.failure.code
        }
        let status = exitStatus(for: summary)
        if status != .success { throw status.code }
    }

    static func exitStatus(for summary: DispatchSummary) -> ExitStatus {
        switch summary.ending {
        case .stoppedEarly: return .stoppedEarly
        case .interrupted: return .interrupted
        case .completed:
            if summary.count(.retryable) + summary.count(.inDoubt) + summary.count(.notSent) > 0 { return .retryableLeft }
            if summary.count(.inputError) > 0 { return .invalidRecords }
            return .success
        }
    }
}
