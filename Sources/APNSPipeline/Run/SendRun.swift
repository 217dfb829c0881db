import APNSCore
import Foundation

/// Everything one `send` (or `replay`) run needs: inputs, how to read them, where results go, how to pace and
/// retry, and how to reach APNs.
public struct SendRunOptions: Sendable {
    /// The campaign's input files.
    public var inputs: [CampaignInput]
    /// How the inputs are read.
    public var reader: CampaignReaderOptions
    /// The result file's path.
    public var resultsPath: String
    /// How result lines are written.
    public var resultsFormat: ResultFormat
    /// Continue the run recorded in `resultsPath` and its journal (`--resume`). Without it, a run continues on its
    /// own when the result file's campaign record says the same campaign is unfinished (`RunStart`).
    public var resume = false
    /// Replace whatever result file, journal and campaign record stand at `resultsPath` (`--overwrite`).
    public var overwrite = false
    /// The campaign this run sends, recorded beside the result file and compared with the record found there;
    /// nil writes no record (standard output, library use).
    public var identity: CampaignIdentity?
    /// The command's arguments, kept in the campaign record for "run this to finish it" messages.
    public var arguments: [String] = []
    /// Earlier result files (`--skip-delivered`): a record whose (token, topic) pair has a delivered, in-doubt or
    /// prune line in one of them is not sent (`EarlierDeliveries`).
    public var skipDelivered: [String] = []
    /// How records are sent: windows, retries, rates.
    public var dispatch = DispatcherConfiguration()
    /// Seconds between progress reports.
    public var progressInterval = 1.0
    /// Force result and journal lines to the disk (fdatasync, grouped as `GroupCommit` says), so that a power
    /// cut loses nothing `--resume` needs.
    public var durable = false
    /// For `replay`: the result files it replays. A stopped campaign among them is recorded as replayed into this
    /// run's result file, so its own command, run again, sends nothing this replay sends.
    public var replayedResults: [String] = []
    /// `production`, `development` or the endpoint's host, recorded in the campaign record.
    public var environment: String?
    /// `--not-after` as given: resolved against the campaign's first start and recorded in its campaign record. A
    /// run continuing a campaign keeps the deadline recorded there; one given that differs is refused.
    public var notAfter: NotAfter?
    /// For a new `replay`: the deadline (seconds since the epoch) it inherits from the campaigns it replays, when no
    /// `--not-after` is given.
    public var inheritedNotAfter: Double?
    /// With several provider keys: which topics they cover. A record whose topic none covers ends `input_error`
    /// `TopicNotCovered` (`TopicCoverageReader`); nil (one key, or a certificate) covers every topic.
    public var topicRoutes: TopicKeyRoutes?

    /// Run settings from their parts.
    public init(
        inputs: [CampaignInput], reader: CampaignReaderOptions, resultsPath: String, resultsFormat: ResultFormat
    ) {
        self.inputs = inputs
        self.reader = reader
        self.resultsPath = resultsPath
        self.resultsFormat = resultsFormat
    }
}

/// Runs one campaign to its end on the calling thread: the engine's event loop drives its transport, the
/// dispatcher reads the inputs as stream slots free up, and results and journal go to disk once per loop turn.
/// SIGINT/SIGTERM reach the dispatcher through the loop (the first stops, the second abandons what is in flight).
///
/// Start-up order: the run's lock, then the engine (every credential, the TLS set-up), the inputs, and only then
/// the result file and journal, so a start-up failure leaves no files that would make the corrected command a
/// "resume".
public enum SendRun {
    /// What a finished run returns.
    public struct Outcome: Sendable {
        /// What the run did and how it ended.
        public var summary: CampaignSummary
        /// What ended the run early, if anything did (unreadable input, full disk, a transport that cannot work).
        public var error: String?
        /// Lines of the earlier run's files that were torn by a crash and dropped (resume only).
        public var tornLinesDropped: Int
        /// How the run started: anew, continuing an unfinished run, or not at all (the campaign had finished).
        public var start: RunStart
        /// The run stopped early before anything reached APNs (no answer, nothing in doubt) on a campaign that had
        /// never run: a failed start, whose files were removed so the corrected command simply runs.
        public var failedStart = false
        /// Result lines taken out of a stopped campaign's result file to be sent again (`StoppedCampaign`).
        public var reopenedLines = 0
    }

    /// How often, with `durable`, a timer forces to the disk result lines written before a quiet spell.
    static let groupCommitCheckInterval = 0.1

    /// Runs the campaign. `engine` is built once the run's lock is held. `progress` is called every
    /// `progressInterval` seconds and once at the end. Throws before anything is sent when the files or the
    /// configuration are unusable.
    public static func run(
        _ options: SendRunOptions,
        engine: () throws -> any SendRunEngine,
        progress: @escaping (CampaignSummary, _ inFlight: Int) -> Void = { _, _ in },
        onStart: (RunStart, _ finalLinesBefore: Int) -> Void = { _, _ in }
    ) throws -> Outcome {
        for input in options.inputs where input.path != "-" {
            // Unreadable inputs fail before any file is created; a stream is not opened ahead of its turn.
            if input.isStream {
                try POSIXFile.checkReadable(input.path)
            } else {
                _ = try POSIXFile.openForReading(input.path)
            }
        }
        let reader = CampaignReader(inputs: options.inputs, options: options.reader)
        return try run(
            options, reader: reader, inputPaths: options.inputs.map(\.path), engine: engine, progress: progress,
            onStart: onStart)
    }

    /// Runs records from any reader (`replay` reads result files); `inputPaths` name the files the reader's
    /// keys index, as result lines print them.
    public static func run(
        _ options: SendRunOptions,
        reader: any RecordReader,
        inputPaths paths: [String],
        engine makeEngine: () throws -> any SendRunEngine,
        progress: @escaping (CampaignSummary, _ inFlight: Int) -> Void,
        onStart: (RunStart, _ finalLinesBefore: Int) -> Void = { _, _ in }
    ) throws -> Outcome {
        let journalPath = SendJournal.path(forResults: options.resultsPath)
        let lock = options.resultsPath == "-" ? nil : try RunLock(resultsPath: options.resultsPath)
        defer { lock?.release() }
        let start =
            options.resultsPath == "-"
            ? (options.resume ? .continueUnfinished : .fresh)
            : try RunStart.decide(
                facts(resultsPath: options.resultsPath, inputs: paths), resultsPath: options.resultsPath,
                identity: options.identity, resume: options.resume, overwrite: options.overwrite)
        let runStartedAt = Date().timeIntervalSince1970
        let deadline = try deadline(options, start: start, now: runStartedAt)
        if case .alreadyFinished(let manifest) = start {
            let finished = try ResumeState(resultsPath: options.resultsPath, journalPath: nil, inputs: paths)
            onStart(start, finished.finishedCount)
            var summary = CampaignSummary()
            summary.earlierRuns = finished.earlierRuns
            // A stopped campaign a replay took over is finished: what it left is the replay's to send.
            summary.ending =
                manifest.replayedInto == nil
                ? manifest.stoppedEarly.map { .stoppedEarly($0) } ?? .completed : .completed
            summary.finishedEarlierAt = manifest.finishedAt ?? manifest.startedAt
            summary.replayedInto = manifest.replayedInto
            return Outcome(summary: summary, error: nil, tornLinesDropped: 0, start: start)
        }
        let engine = try makeEngine()  // credentials, CA file, TLS
        defer { engine.shutdown() }  // the timers below hold the engine: drop them, or it never goes away
        var reopened = 0
        if case .continueStopped = start {
            // Before the resume state is read: the records APNs did not accept lose their lines, to be sent again.
            reopened = try StoppedCampaign.reopen(
                resultsPath: options.resultsPath, inputs: paths, format: options.resultsFormat,
                keptNames: options.reader.keep?.names ?? [])
        }
        var resume = ResumeState()
        var torn = 0
        if start.continues {
            resume = try ResumeState(resultsPath: options.resultsPath, journalPath: journalPath, inputs: paths)
            torn = (resume.tornResultLine == nil ? 0 : 1) + (resume.tornJournalLine == nil ? 0 : 1)
        }
        let readsStream = ContinuedStream.applies(to: options.inputs)
        let resumeState = resume
        let covered: any RecordReader = options.topicRoutes.map { TopicCoverageReader(reader, routes: $0) } ?? reader
        // A stream continued: the same stream again, checked before the first request.
        let reader: any RecordReader =
            readsStream && start.continues && options.resultsPath != "-"
            ? try ContinuedStream(
                covered, inputs: options.inputs, resultsPath: options.resultsPath, journalPath: journalPath,
                isAnswered: { resumeState.status($0) == .finished })
            : covered
        try reader.prepareToStart()  // whole-file failures and campaigns that cannot send, before any file exists
        let earlier = options.skipDelivered.isEmpty ? nil : try EarlierDeliveries(paths: options.skipDelivered)
        var manifest: CampaignManifest?
        if let identity = options.identity, options.resultsPath != "-" {
            var record =
                (start.continues ? try CampaignManifest.read(forResults: options.resultsPath) : nil)
                ?? CampaignManifest(identity: identity, arguments: options.arguments, startedAt: runStartedAt)
            // the same campaign; the paths (and a setting that fixed a stop) as given this time
            record.identity = identity
            record.environment = options.environment
            record.notAfter = deadline
            if case .continueStopped = start {
                record.state = .unfinished
                record.stoppedEarly = nil
                record.finishedAt = nil
                record.arguments = CampaignManifest.redacted(options.arguments)  // the command that fixed the stop
            }
            if start == .fresh { POSIXFile.remove(journalPath) }  // --overwrite, or a run that never sent
            try record.write(forResults: options.resultsPath)
            manifest = record
            try markReplayed(options.replayedResults, into: options.resultsPath)
        }
        onStart(start, resume.finishedCount)
        let mode: AppendOnlyFile.Mode = start.continues ? .append : .create
        let writer = try ResultWriter(
            path: options.resultsPath, format: options.resultsFormat, mode: mode, inputFiles: InputFileList(paths),
            keptNames: options.reader.keep?.names ?? [])
        let journal = options.resultsPath == "-" ? .keepingNothing() : try SendJournal(path: journalPath, mode: mode)
        let sink = ResultFileSink(writer: writer, journal: journal)
        if options.durable {
            sink.groupCommit = GroupCommit(startedAt: engine.now)
            sink.clock = { [unowned engine] in engine.now }
        }
        var dispatch = options.dispatch
        if let deadline {
            // The dispatcher keeps time in the loop's monotonic clock: the deadline, read off the wall clock now.
            dispatch.notAfter = SendDeadline(
                at: engine.now + (deadline - Date().timeIntervalSince1970), text: NotAfter.text(deadline))
        }
        let duplicates = DuplicateFilterHolder(
            DuplicateFilter(scratchDirectory: DuplicateFilter.scratchDirectory(forResults: options.resultsPath)))
        let dispatcher = Dispatcher(
            configuration: dispatch, reader: reader, sink: sink, transport: engine.transport, scheduler: engine,
            isFirstOccurrence: { notification throws(PipelineError) in
                duplicates.filter.sizeForInput(reader.readProgress)
                return try duplicates.filter.insert(notification)
            },
            resumeStatus: start.continues ? { resumeState.status($0) } : { _ in .fresh },
            resumedSends: { resumeState.sends($0) },
            answeredBefore: earlier.map { earlier in { earlier.detail(for: $0) } },
            sentDigest: readsStream ? { SentDigest.of($0) } : nil)

        var result: (CampaignSummary, (any Error)?)?
        func synchronizeIfDue() {
            try? sink.synchronizeIfDue()  // a failure ends the writer: the dispatcher's next flush fails the run
            if result == nil { engine.schedule(after: groupCommitCheckInterval) { synchronizeIfDue() } }
        }
        func report() {
            dispatcher.reportProgress()
            if result == nil { engine.schedule(after: options.progressInterval) { report() } }
        }
        dispatcher.start(onProgress: progress) { summary, error in
            result = (summary, error)
            engine.stop()
        }
        if options.durable { synchronizeIfDue() }
        engine.schedule(after: options.progressInterval) { report() }
        engine.run { signalsReceived in
            if signalsReceived == 1 { dispatcher.interrupt() } else { dispatcher.abortInFlight() }
        }

        guard let finished = result else {
            throw PipelineError(.inputsInvalid, "the event loop stopped before the run finished")
        }
        var (summary, error) = finished
        if error == nil {
            do { try sink.synchronizeIfDue(final: true) } catch let failure { error = failure }
        }
        summary.earlierRuns = resume.earlierRuns
        progress(summary, 0)
        var outcome = Outcome(
            summary: summary, error: nil, tornLinesDropped: torn, start: start, reopenedLines: reopened)
        if case .stoppedEarly = summary.ending, error == nil, start == .fresh, summary.answered == 0,
            summary.count(.inDoubt) == 0, options.resultsPath != "-"
        {
            // Nothing reached APNs: a failed start (an endpoint that does not answer, a CA that does not verify).
            for path in [options.resultsPath, journalPath, CampaignManifest.path(forResults: options.resultsPath)] {
                POSIXFile.remove(path)
            }
            outcome.failedStart = true
            return outcome
        }
        if summary.ending != .interrupted, error == nil {
            // Every record has its line: the campaign is finished or stopped (recorded first), nothing to resume.
            if var finished = manifest {
                finished.state = .finished
                finished.finishedAt = Date().timeIntervalSince1970
                if case .stoppedEarly(let why) = summary.ending {
                    finished.state = .stopped
                    finished.stoppedEarly = why
                }
                do { try finished.write(forResults: options.resultsPath) } catch let failure { error = failure }
            }
            if error == nil, options.resultsPath != "-" { POSIXFile.remove(journalPath) }
        }
        outcome.error = error.map { "\($0)" }
        return outcome
    }

    /// The run's `--not-after` deadline, in seconds since the epoch: for a campaign that has run before, the one its
    /// campaign record holds (a duration given is counted from its first start; a different deadline, or one a
    /// campaign started without, is refused: a usage error); for a new one, the one given, else the one inherited
    /// (`replay`), a duration counted from `now`.
    private static func deadline(_ options: SendRunOptions, start: RunStart, now: Double) throws(PipelineError)
        -> Double?
    {
        guard start != .fresh, options.resultsPath != "-",
            let manifest = try CampaignManifest.read(forResults: options.resultsPath)
        else {
            return options.notAfter?.deadline(firstStart: now) ?? options.inheritedNotAfter
        }
        guard let given = options.notAfter?.deadline(firstStart: manifest.startedAt) else { return manifest.notAfter }
        if let kept = manifest.notAfter, abs(kept - given) < 0.001 { return kept }
        let kept = manifest.notAfter.map { "the deadline \(NotAfter.text($0))" } ?? "no deadline"
        throw PipelineError(
            .campaignChanged,
            "--not-after \(NotAfter.text(given)): the campaign in \(options.resultsPath) "
                + "started with \(kept), and keeps it: run the same command without --not-after, or replay the result file "
                + "with --not-after and a new --results file to send what is left by a new deadline")
    }

    /// Records, in the campaign record of each stopped campaign among `replayed`, that this replay's result file
    /// takes over its unsent records: the campaign is finished there, so its own command sends nothing again.
    private static func markReplayed(_ replayed: [String], into resultsPath: String) throws(PipelineError) {
        for path in replayed {
            guard var record = try? CampaignManifest.read(forResults: path), record.isStopped else { continue }
            record.state = .finished
            record.replayedInto = resultsPath
            try record.write(forResults: path)
        }
    }

    /// What stands beside a result path, for `RunStart`.
    private static func facts(resultsPath: String, inputs: [String]) throws(PipelineError) -> RunStart.Facts {
        for path in [resultsPath, CampaignManifest.path(forResults: resultsPath)]
        where POSIXFile.isSymbolicLink(atPath: path) {
            throw PipelineError(
                .openFailed,
                "\(path) is a symbolic link: refusing to write through it (remove it, or name the real file)")
        }
        let journalPath = SendJournal.path(forResults: resultsPath)
        var journalHoldsEntries = (POSIXFile.regularFileSize(atPath: journalPath) ?? 0) > 0
        let resultsHoldLines = (POSIXFile.regularFileSize(atPath: resultsPath) ?? 0) > 0
        if journalHoldsEntries, !resultsHoldLines {
            // A journal naming no request (a torn line at most) beside no result line is a run that never started.
            let earlier = try? ResumeState(resultsPath: resultsPath, journalPath: journalPath, inputs: inputs)
            journalHoldsEntries = !(earlier?.recordsNothing ?? false)
        }
        return RunStart.Facts(
            manifest: try CampaignManifest.read(forResults: resultsPath), resultsExist: POSIXFile.exists(resultsPath),
            resultsHoldLines: resultsHoldLines, journalHoldsEntries: journalHoldsEntries,
            freeResultsPath: RunStart.freeResultsPath(besides: resultsPath) { path in
                [path, SendJournal.path(forResults: path), CampaignManifest.path(forResults: path)].contains(
                    where: POSIXFile.exists)
            })
    }
}

// MARK: - SendRunEngine

/// What a send run turns on, supplied by whoever links a transport (the CLI, over APNSTransport's event loop and
/// connection pool): the loop's clock and timers, the transport on that loop, and the stop signals the loop
/// delivers. The pipeline itself never sees the event loop, TLS or HTTP/2.
public protocol SendRunEngine: LoopScheduler {
    /// The transport the dispatcher sends through (it starts connecting when `run` starts).
    var transport: any PushTransport { get }

    /// Starts the transport, then runs loop turns on the calling thread until `stop()`. After a turn in which
    /// SIGINT/SIGTERM arrived, calls `onSignal` (on this thread) with how many have arrived in all.
    func run(onSignal: @escaping (_ signalsReceived: Int) -> Void)

    /// Makes `run` return after the current turn; called on the loop thread.
    func stop()

    /// Ends the loop's life once `run` has returned: drops timers and queued work, which hold the run's objects.
    func shutdown()
}

/// The run's duplicate filter, asked once a record from the dispatcher's closure: in a class field, unlike a
/// captured `var`, each use costs no dynamic exclusivity check (docs/PERFORMANCE.md "Exclusivity checks").
private final class DuplicateFilterHolder {
    @exclusivity(unchecked)
    var filter: DuplicateFilter

    init(_ filter: DuplicateFilter) {
        self.filter = filter
    }
}
