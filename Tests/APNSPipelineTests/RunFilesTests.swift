import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// The run's own files: the lock, attempts and campaign counts from an earlier run, group commit, failed writes,
/// permissions and planted symbolic links.
@Suite("Run files")
struct RunFilesTests {
    typealias Support = PipelineTestSupport

    @Test("a result file whose folder is missing, or a file, is named as such (not by its lock file)")
    func missingFolder() throws {
        let directory = try Support.temporaryDirectory()
        let file = try Support.write("x\n", to: "plain", in: directory)
        for folder in [directory.appendingPathComponent("missing").path, file] {
            do {
                _ = try RunLock(resultsPath: folder + "/out.ndjson")
                Issue.record("a lock in \(folder)")
            } catch {
                #expect(error.description.contains("the folder \(folder) does not exist"), "\(error)")
                #expect(!error.description.contains(".lock"), "\(error)")
            }
        }
    }

    @Test("a second lock on the same result file is refused, naming the holder's pid; release frees it")
    func lockConflict() throws {
        let directory = try Support.temporaryDirectory()
        let results = directory.appendingPathComponent("out.ndjson").path
        let first = try RunLock(resultsPath: results, pid: 4242)
        #expect(FileManager.default.fileExists(atPath: RunLock.path(forResults: results)))
        do {
            _ = try RunLock(resultsPath: results, pid: 77)
            Issue.record("a second lock was granted")
        } catch {
            #expect(error.kind == .runLocked)
            #expect(error.description.contains("pid 4242"), "\(error)")
        }
        first.release()
        #expect(!FileManager.default.fileExists(atPath: RunLock.path(forResults: results)), "the lock file stayed")
        let second = try RunLock(resultsPath: results, pid: 77)
        let text = try String(contentsOfFile: RunLock.path(forResults: results), encoding: .utf8)
        #expect(text == "77\n")
        second.release()
    }

    @Test("a lock file left by a killed run is taken over")
    func staleLockFile() throws {
        let directory = try Support.temporaryDirectory()
        let results = directory.appendingPathComponent("out.ndjson").path
        try Data("999999\n".utf8).write(to: URL(fileURLWithPath: RunLock.path(forResults: results)))
        let lock = try RunLock(resultsPath: results, pid: 5)
        #expect(try String(contentsOfFile: RunLock.path(forResults: results), encoding: .utf8) == "5\n")
        lock.release()
    }

    @Test("resume state counts the journal's sends per record and the earlier final lines by outcome and reason")
    func sendsAndTally() throws {
        var state = ResumeState()
        for kind: SendJournal.Entry.Kind in [.sent, .retryable, .sent, .retryable, .sent] {
            state.note(SendJournal.Entry(kind: kind, fileIndex: 1, line: 9))
        }
        state.note(SendJournal.Entry(kind: .sent, fileIndex: 0, line: 9))
        for _ in 0..<300 { state.note(SendJournal.Entry(kind: .sent, fileIndex: 0, line: 10)) }
        #expect(state.status(RecordKey(fileIndex: 1, line: 9)) == .inDoubt)
        #expect(state.sends(RecordKey(fileIndex: 1, line: 9)) == 3)
        #expect(state.sends(RecordKey(fileIndex: 0, line: 9)) == 1)
        #expect(state.sends(RecordKey(fileIndex: 0, line: 10)) == 255, "the count saturates")
        #expect(state.status(RecordKey(fileIndex: 0, line: 10)) == .inDoubt)
        state.markFinished(RecordKey(fileIndex: 1, line: 9))
        #expect(state.status(RecordKey(fileIndex: 1, line: 9)) == .finished)

        let directory = try Support.temporaryDirectory()
        let results = directory.appendingPathComponent("r.ndjson").path
        let writer = try ResultWriter(path: results, format: .ndjson, mode: .create, inputFiles: InputFileList(["a"]))
        try writer.write(
            ResultRecord(key: RecordKey(fileIndex: 0, line: 1), outcome: .delivered, status: 200, attempts: 1))
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 2), outcome: .inDoubt, attempts: 2))
        try writer.write(
            ResultRecord(key: RecordKey(fileIndex: 0, line: 3), outcome: .prune, status: 410, reason: "Unregistered"))
        // a second line: ignored
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 2), outcome: .delivered, attempts: 1))
        try writer.flush()
        let loaded = try ResumeState(resultsPath: results, journalPath: nil, inputs: ["a"])
        #expect(loaded.earlierRuns.records == 3)
        #expect(loaded.earlierRuns.outcomes == [.delivered: 1, .inDoubt: 1, .prune: 1])
        #expect(loaded.earlierRuns.reasons == ["prune/Unregistered": 1])
        #expect(!loaded.recordsNothing)
    }

    @Test("an in-doubt line written on resume carries the earlier runs' sends as its attempts")
    func resumedAttempts() throws {
        let records = (1...3).map { Fixture.record($0, token: Fixture.token($0)) }
        let statuses: [Int: ResumeStatus] = [1: .inDoubt, 2: .inDoubt]
        let run = DispatchRun(
            records: records, resume: { statuses[$0.line] ?? .fresh },
            resumedSends: { $0.line == 1 ? 3 : 1 }
        ) { _, _ in Fixture.ok() }
        _ = try #require(run.run())
        let attempts = Dictionary(uniqueKeysWithValues: run.sink.results.map { ($0.key.line, $0.attempts) })
        #expect(attempts == [1: 3, 2: 1, 3: 1])
        #expect(run.sink.results.filter { $0.outcome == .inDoubt }.count == 2)
    }

    @Test("a result write failing inside the transport's answer callback closes the transport after it, not in it")
    func failureInsideAnswerCallback() throws {
        let scheduler = ManualScheduler()
        let transport = CallbackProbeTransport(scheduler: scheduler)
        let sink = FailingSink(failAfter: 2)
        let records = (1...20).map { Fixture.record($0, token: Fixture.token($0)) }
        let dispatcher = Dispatcher(
            configuration: DispatcherConfiguration(), reader: ArraySource(records), sink: sink, transport: transport,
            scheduler: scheduler, isFirstOccurrence: { _ in true })
        var finished: (CampaignSummary, (any Error)?)?
        dispatcher.start { summary, error in finished = (summary, error) }
        scheduler.run(limit: 10_000)
        let (summary, error) = try #require(finished)
        #expect(error != nil, "the write failure ends the run")
        #expect(transport.closedDuringAnswer == false, "the transport was closed from inside its own answer callback")
        #expect(transport.closed)
        #expect(summary.count(.inDoubt) == 0, "requests that never left were reported in doubt")
        #expect(summary.count(.notSent) > 0)
    }

    @Test("an empty journal beside an empty result file records nothing")
    func emptyRun() throws {
        let directory = try Support.temporaryDirectory()
        let results = try Support.write("", to: "r.ndjson", in: directory)
        let journal = try Support.write("", to: "r.ndjson.journal", in: directory)
        #expect(try ResumeState(resultsPath: results, journalPath: journal, inputs: ["a"]).recordsNothing)
        let sent = try Support.write("s 0 1\n", to: "j2", in: directory)
        #expect(try !ResumeState(resultsPath: results, journalPath: sent, inputs: ["a"]).recordsNothing)
    }

    @Test("the summary reports the whole campaign, with this run's figures beside it")
    func campaignSummary() throws {
        var summary = CampaignSummary()
        summary.records = 2
        summary.outcomes = [.delivered: 2]
        summary.earlierRuns.add(outcome: .inDoubt, reason: nil)
        summary.earlierRuns.add(outcome: .delivered, reason: nil)
        summary.earlierRuns.add(outcome: .prune, reason: "Unregistered")
        #expect(summary.campaign.records == 5)
        #expect(summary.campaign.leftToRetry == 1)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(summary.json(connections: 1))) as? [String: Any])
        #expect(json["records"] as? Int == 5)
        #expect((json["outcomes"] as? [String: Int])?["in_doubt"] == 1)
        #expect((json["outcomes"] as? [String: Int])?["delivered"] == 3)
        #expect((json["reasons"] as? [String: Int]) == ["prune/Unregistered": 1])
        let thisRun = try #require(json["this_run"] as? [String: Any])
        #expect(thisRun["records"] as? Int == 2)
        #expect((thisRun["outcomes"] as? [String: Int])?["in_doubt"] == 0)
        let metrics = CampaignMetrics(campaign: "c", shard: "all").text(summary, now: 1, lastSuccess: nil)
        #expect(metrics.contains("apns_bulk_records_total{campaign=\"c\",shard=\"all\",outcome=\"in_doubt\"} 1\n"))
        #expect(metrics.contains("apns_bulk_run_records_total{campaign=\"c\",shard=\"all\",outcome=\"delivered\"} 2\n"))
        let text = summary.text(resultsPath: nil)
        #expect(text.contains("finished: 5 records (2 in this run)"), "\(text)")
        #expect(text.contains("outcomes: delivered 3, prune 1, in_doubt 1") || text.contains("in_doubt 1"), "\(text)")
        #expect(text.contains("this run: delivered 2"), "\(text)")
    }

    @Test("group commit: the journal before requests leave, results within the interval or the record budget")
    func groupCommit() {
        var commit = GroupCommit(interval: 0.05, maximumRecords: 100, startedAt: 10)
        #expect(commit.due(now: 10) == (false, false))
        commit.flushed(results: 3, sends: 5)
        #expect(commit.due(now: 10.01) == (false, true))
        commit.synchronized(results: false, journal: true, now: 10.01)
        #expect(commit.due(now: 10.02) == (false, false))
        #expect(commit.due(now: 10.06) == (true, false), "results wait at most the interval")
        #expect(commit.due(now: 10.02, final: true) == (true, false), "the end syncs everything")
        commit.flushed(results: 103, sends: 5)
        #expect(commit.due(now: 10.02) == (true, false), "or at most the record budget")
        commit.synchronized(results: true, journal: false, now: 10.02)
        #expect(commit.due(now: 10.5) == (false, false), "nothing new, nothing to sync")
    }

    @Test("a durable sink syncs what group commit says, and a failed write ends the writer for good")
    func failedWriteEndsWriter() throws {
        let sink = FlakyByteSink()
        let writer = ResultWriter(sink: sink, format: .ndjson, inputFiles: InputFileList(["a"]))
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 1), outcome: .delivered, attempts: 1))
        sink.failing = true
        #expect(throws: PipelineError.self) { try writer.flush() }
        sink.failing = false
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 2), outcome: .delivered, attempts: 1))
        #expect(throws: PipelineError.self) { try writer.flush() }
        #expect(sink.bytes.isEmpty, "a line reached the file after a failed write")
    }

    @Test("result and journal files are created 0600 and never written through a planted symbolic link")
    func permissionsAndSymlinks() throws {
        let directory = try Support.temporaryDirectory()
        let results = directory.appendingPathComponent("out.ndjson").path
        _ = try ResultWriter(path: results, format: .ndjson, mode: .create, inputFiles: InputFileList(["a"]))
        _ = try SendJournal(path: SendJournal.path(forResults: results), mode: .create)
        try ReportFile.write(Array("{}\n".utf8), to: directory.appendingPathComponent("summary.json").path)
        for name in ["out.ndjson", "out.ndjson.journal", "summary.json"] {
            let path = directory.appendingPathComponent(name).path
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            #expect(mode & 0o077 == 0, "\(name): \(String(mode, radix: 8))")
        }
        let victim = try Support.write("keep\n", to: "victim", in: directory)
        let planted = directory.appendingPathComponent("planted.ndjson").path
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
        for mode in [AppendOnlyFile.Mode.create, .append] {
            do {
                _ = try ResultWriter(path: planted, format: .ndjson, mode: mode, inputFiles: InputFileList(["a"]))
                Issue.record("opened through a symbolic link")
            } catch {
                #expect(error.description.contains("symbolic link"), "\(error)")
            }
        }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep\n")
    }
}
