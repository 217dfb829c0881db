import APNSBulk
import APNSCore
import APNSPipeline
import APNSTransport
import ArgumentParser
import Foundation
import Synchronization

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
        _ options: SendRunOptions, clients: RunClients, output: OutputOptions, hint: StopHint? = nil, body: Body
    ) throws {
        signal(SIGXFSZ, SIG_IGN)  // past the file-size limit, a write fails (EFBIG) and the run ends cleanly
        let stop = StopSignal()
        let watcher = SignalWatcher(stop)
        let printer = ProgressPrinter(option: output.progress, rateLimit: options.dispatch.ratePerSecond)
        let shard = options.reader.shard
        let timeline = TimelineRecorder(
            startedAt: Date().timeIntervalSince1970,
            label: shard.count > 1 ? "shard \(shard.description)" : (options.resultsPath as NSString).lastPathComponent)
        let metrics = CampaignMetrics(
            campaign: output.metricsLabel ?? CampaignMetrics.campaign(forResults: options.resultsPath),
            shard: shard.count > 1 ? shard.description : "all")
        let pusher = try output.pushgateway.target().map {
            MetricsPusher(
                target: $0, campaign: metrics.campaign, shard: metrics.shard,
                interval: try output.pushgateway.pushInterval())
        }
        let outcome: SendRun.Outcome
        defer { printer.endLiveDisplay() }  // every way out erases the live lines (the normal one does it below)
        do {
            outcome = try withExtendedLifetime(watcher) {
                try body(
                    options,
                    {
                        try EventLoopSendEngine(
                            configurations: clients.configurations, labels: clients.labels, routes: clients.routes,
                            signals: stop)
                    },
                    { summary, inFlight in
                        printer.update(summary, inFlight: inFlight, window: summary.inFlightWindow)
                        timeline.record(summary, inFlight: inFlight, window: summary.inFlightWindow)
                        pusher?.pushDuringRun(now: Date().timeIntervalSince1970) {
                            metrics.text(summary, now: Date().timeIntervalSince1970, lastSuccess: nil, inProgress: true)
                        }
                    },
                    { start, answered in
                        announce(start, answered: answered, resultsPath: options.resultsPath)
                    })
            }
        } catch let error as PipelineError {
            // A start-up failure: one line, no summary (nothing was sent, no file was created).
            printer.endLiveDisplay()
            throw startFailure(error)
        }
        printer.endLiveDisplay()
        let summary = outcome.summary
        if outcome.tornLinesDropped > 0 {
            StandardStream.error("apns-bulk: dropped a line torn by the crash before resuming\n")
        }
        if outcome.failedStart, case .stoppedEarly(let why) = summary.ending {
            // Nothing reached APNs and no file was kept: one error line, and how to fix it.
            let line =
                "apns-bulk: error: stopped before any request reached APNs: \(why); nothing was sent and no file "
                + "was kept, so the corrected command simply runs"
            StandardStream.error(PrintableText.escaping(line) + "\n")
            if let fix = hint?.line(forStop: why, failedStart: true) {
                StandardStream.error("apns-bulk: what to do: \(PrintableText.escaping(fix))\n")
            }
            throw ExitStatus.stoppedEarly.code
        }
        StandardStream.error(summary.text(resultsPath: options.resultsPath) + "\n")
        if case .stoppedEarly(let why) = summary.ending, let line = hint?.line(forStop: why) {
            StandardStream.error("apns-bulk: what to do: \(PrintableText.escaping(line))\n")
        }
        // A campaign found finished keeps the files its run wrote; only those missing (a run killed after it
        // finished, before it wrote them) are written now, from the result file.
        let alreadyFinished = summary.finishedEarlierAt != nil
        func wanted(_ path: String?) -> String? {
            guard let path, !(alreadyFinished && FileManager.default.fileExists(atPath: path)) else { return nil }
            return path
        }
        if let path = wanted(output.summary) {
            let json = timeline.timeline.inserted(
                intoSummaryJSON: summary.json(
                    connections: clients.primary.maximumConnections * clients.configurations.count))
            try ReportFile.write(json, to: path)
        }
        let now = Date().timeIntervalSince1970
        let finished =
            outcome.error == nil
            && {  // statuses 0, 2, 3 and 6
                switch summary.ending {
                case .completed, .deadlinePassed: return true
                case .stoppedEarly, .interrupted: return false
                }
            }()
        if let path = wanted(output.metrics) {
            let lastSuccess = finished ? (summary.finishedEarlierAt ?? now) : CampaignMetrics.lastSuccess(atPath: path)
            try CampaignMetrics.write(metrics.text(summary, now: now, lastSuccess: lastSuccess), to: path)
        }
        if let pusher {
            // A run that did not finish pushes no last-success gauge: the POST keeps the one the gateway holds.
            pusher.pushAtEnd(
                body: metrics.text(summary, now: now, lastSuccess: finished ? (summary.finishedEarlierAt ?? now) : nil))
        }
        if let path = wanted(output.report) {
            try ReportCommand.writeReport(
                resultPaths: [options.resultsPath], timelines: [timeline.timeline], html: path)
        }
        if let error = outcome.error {
            StandardStream.error(message: String(describing: error))
            // With the results on standard output nothing is kept to continue from: running again would send the
            // campaign again, so this needs a person (4), not a scheduler's retry (1).
            throw (options.resultsPath == "-" ? ExitStatus.stoppedEarly : ExitStatus.failure).code
        }
        let status = exitStatus(for: summary)
        if status != .success { throw status.code }
    }

    /// Prints a start-up failure as its one line and returns the exit status it ends with (64 for a command line
    /// wrong for its files, else 1): the one rule of `send`, `replay` and `validate`.
    static func startFailure(_ error: PipelineError) -> ExitCode {
        StandardStream.error(message: "\(error)")
        return (error.kind.isUsageError ? ExitStatus.usage : ExitStatus.failure).code
    }

    /// Runs `body`; a `PipelineError` it throws is printed and thrown as its exit status (`startFailure`).
    static func reportingStartFailure(_ body: () throws(PipelineError) -> Void) throws {
        do { try body() } catch { throw startFailure(error) }
    }

    /// Says on stderr, as the run starts, that it continues an unfinished or a stopped run.
    private static func announce(_ start: RunStart, answered: Int, resultsPath: String) {
        let line: String
        switch start {
        case .continueUnfinished:
            line =
                "apns-bulk: continuing the unfinished run in \(PrintableText.escaping(resultsPath)) "
                + "(\(CountedNoun.text(answered, "record")) answered before): nothing answered is sent again\n"
        case .continueStopped(let manifest):
            line =
                "apns-bulk: continuing the campaign in \(PrintableText.escaping(resultsPath)), stopped early ("
                + PrintableText.escaping(manifest.stoppedEarly ?? "") + "): the records APNs did not accept are sent "
                + "again; the \(answered) delivered, dead, invalid or in doubt are not\n"
        case .fresh, .alreadyFinished:
            return
        }
        StandardStream.error(line)
    }

    /// This run's ending, and the whole campaign's final lines.
    static func exitStatus(for summary: CampaignSummary) -> ExitStatus {
        switch summary.ending {
        case .stoppedEarly: return .stoppedEarly
        case .interrupted: return .interrupted
        case .completed, .deadlinePassed:
            let campaign = summary.campaign
            // Records the deadline cut: retrying cannot help, whatever else is left.
            if campaign.count(.expired) > 0 { return .deadlinePassed }
            if case .deadlinePassed = summary.ending, campaign.leftToRetry > 0 { return .deadlinePassed }
            if campaign.leftToRetry > 0 { return .retryableLeft }
            if campaign.count(.inputError) > 0 { return .invalidRecords }
            return .success
        }
    }
}

// MARK: - SignalWatcher

/// Turns SIGINT and SIGTERM into a `StopSignal` for as long as it lives (the signals are ignored by the process
/// and heard on a dispatch queue, which raises the stop signal and so wakes the campaign's event loop).
final class SignalWatcher {
    private var sources: [any DispatchSourceSignal] = []

    init(_ stop: StopSignal) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.raise() }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

// MARK: - TimelineRecorder

/// Keeps the run's timeline while the progress callback feeds it.
final class TimelineRecorder: @unchecked Sendable {
    // @unchecked: fed only from the event-loop thread that runs the campaign, read after it returns.
    private(set) var timeline: CampaignTimeline

    init(startedAt: Double, label: String) {
        timeline = CampaignTimeline(startedAt: startedAt)
        timeline.label = label
    }

    func record(_ summary: CampaignSummary, inFlight: Int, window: Int? = nil) {
        timeline.record(summary, inFlight: inFlight, window: window)
    }
}
