import APNSCore
import APNSTransport
import Foundation

/// Everything one `send` (or `replay`) run needs: inputs, how to read them, where results go, how to pace and
/// retry, and how to reach APNs.
public struct SendRunOptions: Sendable {
    public var inputs: [CampaignInput]
    public var reader: CampaignReaderOptions
    public var resultsPath: String
    public var resultsFormat: ResultFormat
    /// Continue the run recorded in `resultsPath` and its journal.
    public var resume = false
    public var dispatch = DispatchConfiguration()
    public var client: APNSClientConfiguration
    /// Seconds between progress reports.
    public var progressInterval = 1.0
    /// Force result and journal lines to the disk (fdatasync, grouped as `GroupCommit` says), so that a power
    /// cut loses nothing `--resume` needs.
    public var durable = false

    public init(inputs: [CampaignInput], reader: CampaignReaderOptions, resultsPath: String, resultsFormat: ResultFormat,
                client: APNSClientConfiguration) {
        self.inputs = inputs
        self.reader = reader
        self.resultsPath = resultsPath
        self.resultsFormat = resultsFormat
        self.client = client
    }
}

/// Runs one campaign to its end on the calling thread: an event loop drives the connection pool, the
/// dispatcher reads the inputs as stream slots free up, and results and journal go to disk once per loop turn.
///
/// Start-up order: the run's lock, then every credential, the TLS set-up and the inputs, and only then the result
/// file and journal, so a start-up failure leaves no files that would make the corrected command a "resume".
public enum SendRun {
    /// What a finished run returns.
    public struct Outcome: Sendable {
        public var summary: DispatchSummary
        /// What ended the run early, if anything did (unreadable input, full disk, a transport that cannot work).
        public var error: String?
        /// Lines of the earlier run's files that were torn by a crash and dropped (resume only).
        public var tornLinesDropped: Int
    }

    /// Runs the campaign. `progress` is called every `progressInterval` seconds and once at the end.
    /// Throws before anything is sent when the files or the configuration are unusable.
    public static func run(
        _ options: SendRunOptions,
        stop: StopSignal = StopSignal(),
        progress: @escaping (DispatchSummary, _ inFlight: Int) -> Void = { _, _ in }
    ) throws -> Outcome {
        for input in options.inputs where input.path != "-" {
            _ = try POSIXFile.openForReading(input.path)  // unreadable inputs fail before any file is created
        }
        let reader = CampaignReader(inputs: options.inputs, options: options.reader)
        return try run(options, reader: reader, inputPaths: options.inputs.map(\.path), stop: stop, progress: progress)
    }

    /// Runs records from any reader (`replay` reads result files); `inputPaths` name the files the reader's
    /// keys index, as result lines print them.
    public static func run(
        _ options: SendRunOptions,
        reader: any RecordReader,
        inputPaths paths: [String],
        stop: StopSignal,
        progress: @escaping (DispatchSummary, _ inFlight: Int) -> Void
    ) throws -> Outcome {
        let journalPath = SendJournal.path(forResults: options.resultsPath)
        let lock = options.resultsPath == "-" ? nil : try RunLock(resultsPath: options.resultsPath)
        defer { lock?.release() }
        let loop = try EventLoop()
        defer { loop.shutdown() }  // the timers below hold the loop: drop them, or it never goes away
        let pool = try APNSClientPool(configuration: options.client, loop: loop)  // credentials, CA file, TLS
        var resume = ResumeState()
        var torn = 0
        if options.resume {
            resume = try ResumeState(resultsPath: options.resultsPath, journalPath: journalPath, inputs: paths)
            torn = (resume.tornResultLine == nil ? 0 : 1) + (resume.tornJournalLine == nil ? 0 : 1)
        } else if POSIXFile.exists(journalPath) {
            // A journal naming no request beside no result line is a run that never started: start over.
            let earlier = try? ResumeState(resultsPath: options.resultsPath, journalPath: journalPath, inputs: paths)
            guard let earlier, earlier.recordsNothing else {
                throw PipelineError(.unfinishedRun, "\(options.resultsPath) belongs to an unfinished run (\(journalPath) "
                    + "exists): add --resume to finish it, or remove both files to start over")
            }
        }
        let mode: AppendOnlyFile.Mode = options.resume ? .append : .create
        let writer = try ResultWriter(path: options.resultsPath, format: options.resultsFormat, mode: mode, inputFiles: InputFileList(paths))
        let journal = try SendJournal(path: journalPath, mode: mode)
        let sink = ResultFileSink(writer: writer, journal: journal)
        let scheduler = EventLoopScheduler(loop: loop)
        if options.durable {
            sink.groupCommit = GroupCommit(startedAt: scheduler.now)
            sink.clock = { scheduler.now }
        }
        var duplicates = DuplicateFilter()
        let resumeState = resume
        let dispatcher = Dispatcher(
            configuration: options.dispatch, reader: reader, sink: sink, transport: pool, scheduler: scheduler,
            isFirstOccurrence: { duplicates.insert($0) },
            resumeStatus: options.resume ? { resumeState.status($0) } : { _ in .fresh },
            resumedSends: { resumeState.sends($0) })

        var result: (DispatchSummary, (any Error)?)?
        var signalsSeen = 0
        func watch() {
            let received = stop.received
            if received > signalsSeen {
                signalsSeen = received
                if received == 1 { dispatcher.interrupt() } else { dispatcher.abortInFlight() }
            }
            try? sink.synchronizeIfDue()  // a failure ends the writer: the dispatcher's next flush fails the run
            if result == nil { _ = loop.schedule(after: 0.1) { watch() } }
        }
        func report() {
            dispatcher.reportProgress()
            if result == nil { _ = loop.schedule(after: options.progressInterval) { report() } }
        }
        pool.start()
        dispatcher.start(onProgress: progress) { summary, error in
            result = (summary, error)
            loop.stop()
        }
        watch()
        _ = loop.schedule(after: options.progressInterval) { report() }
        loop.run()

        guard let finished = result else {
            throw PipelineError(.inputsInvalid, "the event loop stopped before the run finished")
        }
        var (summary, error) = finished
        if error == nil {
            do { try sink.synchronizeIfDue(final: true) } catch let failure { error = failure }
        }
        summary.earlierRuns = resume.earlierRuns
        progress(summary, 0)
        if summary.ending != .interrupted, error == nil {
            POSIXFile.remove(journalPath)  // every record has its line: nothing to resume
        }
        return Outcome(summary: summary, error: error.map { "\($0)" }, tornLinesDropped: torn)
    }
}
