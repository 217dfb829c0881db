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
        let reader = CampaignReader(inputs: options.inputs, options: options.reader)
        return try run(options, source: reader, inputPaths: options.inputs.map(\.path), stop: stop, progress: progress)
    }

    /// Runs records from any source (`replay` reads result files); `inputPaths` name the files the source's
    /// keys index, as result lines print them.
    public static func run(
        _ options: SendRunOptions,
        source: any DispatchRecordSource,
        inputPaths paths: [String],
        stop: StopSignal,
        progress: @escaping (DispatchSummary, _ inFlight: Int) -> Void
    ) throws -> Outcome {
        let journalPath = SendJournal.path(forResults: options.resultsPath)
        var resume = ResumeState()
        var torn = 0
        if options.resume {
            resume = try ResumeState(resultsPath: options.resultsPath, journalPath: journalPath, inputs: paths)
            torn = (resume.tornResultLine == nil ? 0 : 1) + (resume.tornJournalLine == nil ? 0 : 1)
        } else if FileManager.default.fileExists(atPath: journalPath) {
            throw PipelineError(.inputsInvalid, "\(options.resultsPath) belongs to an unfinished run (\(journalPath) exists): "
                + "add --resume to finish it, or remove both files to start over")
        }
        let mode: AppendOnlyFile.Mode = options.resume ? .append : .create
        let writer = try ResultWriter(path: options.resultsPath, format: options.resultsFormat, mode: mode)
        let journal = try SendJournal(path: journalPath, mode: mode)
        let sink = ResultFileSink(writer: writer, journal: journal, inputPaths: paths)
        let loop = try EventLoop()
        defer { loop.shutdown() }  // the timers below hold the loop: drop them, or it never goes away
        let pool = try APNSClientPool(configuration: options.client, loop: loop)
        let scheduler = EventLoopScheduler(loop: loop)
        var duplicates = DuplicateFilter()
        let resumeState = resume
        let dispatcher = Dispatcher(
            configuration: options.dispatch, source: source, sink: sink, transport: pool, scheduler: scheduler,
            isFirstOccurrence: { duplicates.insert($0) },
            resumeStatus: options.resume ? { resumeState.status($0) } : { _ in .fresh })

        var result: (DispatchSummary, (any Error)?)?
        var signalsSeen = 0
        func watch() {
            let received = stop.received
            if received > signalsSeen {
                signalsSeen = received
                if received == 1 { dispatcher.interrupt() } else { dispatcher.abortInFlight() }
            }
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

        guard let (summary, error) = result else {
            throw PipelineError(.inputsInvalid, "the event loop stopped before the run finished")
        }
        progress(summary, 0)
        if summary.ending != .interrupted, error == nil {
            try? FileManager.default.removeItem(atPath: journalPath)  // every record has its line: nothing to resume
        }
        return Outcome(summary: summary, error: error.map { "\($0)" }, tornLinesDropped: torn)
    }
}
