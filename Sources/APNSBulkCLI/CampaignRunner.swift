import APNSCore
import APNSPipeline
import APNSTransport
import ArgumentParser
import Foundation

/// What `send` and `replay` share after parsing: the engine the run turns on (event loop, connection pool,
/// signals), progress, the final summary, summary and metrics files, and the exit status. After a resumed or
/// continued run, the exit status and the outcome counts describe the whole campaign (every final line in the
/// result file), with this run's own figures beside them; a campaign found finished is reported, not sent again.
enum CampaignRunner {
    /// The run itself: given the options, the engine's maker, the progress callback and the start callback.
    typealias Body = (
        SendRunOptions, _ engine: () throws -> any SendRunEngine, @escaping (CampaignSummary, Int) -> Void,
        _ onStart: (RunStart, Int) -> Void
    ) throws -> SendRun.Outcome

    static func run(
        _ options: SendRunOptions, client: APNSClientConfiguration, output: OutputOptions, hint: StopHint? = nil, body: Body
    ) throws {
        signal(SIGXFSZ, SIG_IGN)  // past the file-size limit, a write fails (EFBIG) and the run ends cleanly
        let stop = StopSignal()
        let watcher = SignalWatcher(stop)
        let printer = ProgressPrinter(option: output.progress)
        let shard = options.reader.shard
        let timeline = TimelineRecorder(
            startedAt: Date().timeIntervalSince1970,
            label: shard.count > 1 ? "shard \(shard.description)" : (options.resultsPath as NSString).lastPathComponent)
        let outcome: SendRun.Outcome
        defer { printer.endLiveDisplay() }  // every way out erases the live lines (the normal one does it below)
        do {
            outcome = try withExtendedLifetime(watcher) {
                try body(options, { try EventLoopSendEngine(client: client, signals: stop) }, { summary, inFlight in
                    printer.update(summary, inFlight: inFlight, window: summary.inFlightWindow)
                    timeline.record(summary, inFlight: inFlight, window: summary.inFlightWindow)
                }, { start, answered in
                    announce(start, answered: answered, resultsPath: options.resultsPath)
                })
            }
        } catch let error as PipelineError {
            // A start-up failure: one line, no summary (nothing was sent, no file was created).
            printer.endLiveDisplay()
            FileHandle.standardError.write(Data("apns-bulk: error: \(error)\n".utf8))
            throw (error.kind.isUsageError ? ExitStatus.usage : ExitStatus.failure).code
        }
        printer.endLiveDisplay()
        let summary = outcome.summary
        if outcome.tornLinesDropped > 0 {
            FileHandle.standardError.write(Data("apns-bulk: dropped a line torn by the crash before resuming\n".utf8))
        }
        FileHandle.standardError.write(Data((summary.text(resultsPath: options.resultsPath) + "\n").utf8))
        if case .stoppedEarly(let why) = summary.ending, let line = hint?.line(forStop: why) {
            FileHandle.standardError.write(Data("apns-bulk: what to do: \(PrintableText.escaping(line))\n".utf8))
        }
        // A campaign found finished keeps the files its run wrote; only those missing (a run killed after it
        // finished, before it wrote them) are written now, from the result file.
        let alreadyFinished = summary.finishedEarlierAt != nil
        func wanted(_ path: String?) -> String? {
            guard let path, !(alreadyFinished && FileManager.default.fileExists(atPath: path)) else { return nil }
            return path
        }
        if let path = wanted(output.summary) {
            let json = timeline.timeline.inserted(intoSummaryJSON: summary.json(connections: client.connectionCount))
            try ReportFile.write(json, to: path)
        }
        if let path = wanted(output.metrics) {
            let metrics = CampaignMetrics(
                campaign: output.metricsLabel ?? CampaignMetrics.campaign(forResults: options.resultsPath),
                shard: options.reader.shard.count > 1 ? options.reader.shard.description : "all")
            let now = Date().timeIntervalSince1970
            let finished = summary.ending == .completed && outcome.error == nil  // statuses 0, 2 and 3
            let lastSuccess = finished ? (summary.finishedEarlierAt ?? now) : CampaignMetrics.lastSuccess(atPath: path)
            try CampaignMetrics.write(metrics.text(summary, now: now, lastSuccess: lastSuccess), to: path)
        }
        if let path = wanted(output.report) {
            try ReportCommand.writeReport(resultPaths: [options.resultsPath], timelines: [timeline.timeline], html: path)
        }
        if let error = outcome.error {
            FileHandle.standardError.write(Data("apns-bulk: error: \(PrintableText.escaping(String(describing: error)))\n".utf8))
            throw ExitStatus.failure.code
        }
        let status = exitStatus(for: summary)
        if status != .success { throw status.code }
    }

    /// Says on stderr, as the run starts, that it continues an unfinished run.
    private static func announce(_ start: RunStart, answered: Int, resultsPath: String) {
        guard start == .continueUnfinished else { return }
        let line = "apns-bulk: continuing the unfinished run in \(PrintableText.escaping(resultsPath)) "
            + "(\(answered) records answered before): nothing answered is sent again\n"
        FileHandle.standardError.write(Data(line.utf8))
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
