import Foundation
import Testing

/// Replay of failures and resume after kill -9, with the built executable against `apns-bulk mock`.
@Suite("replay and resume end to end", .serialized)
struct RecoveryEndToEndTests {
    @Test("replay re-sends exactly the retryable records, and nothing else")
    func replay() throws {
        let out = try TemporaryDirectory()
        let campaign = out.file("c.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 600 --dead 0.05 --out '\(campaign)'")
        let flaky = try MockProcess(["--fault", "500=0.2", "--seed", "7"])
        let first = out.file("first.ndjson")
        let run = try Tool.run(["send", campaign, "--results", first, "--max-attempts", "1"] + flaky.clientArguments)
        #expect(run.status == 3, "exit \(run.status): \(run.stderr)")
        _ = try flaky.stop()
        let firstLines = try Results.read(first)
        let retryable = firstLines.filter { $0["outcome"] as? String == "retryable" }
        #expect(retryable.count > 60 && retryable.count < 200, "\(retryable.count) retryable of 600")
        #expect(retryable.allSatisfy { $0["payload"] != nil }, "replay needs the payload in the line")

        let healthy = try MockProcess()
        let second = out.file("second.ndjson")
        let replay = try Tool.run(["replay", first, "--results", second] + healthy.replayArguments)
        #expect(replay.status == 0, "exit \(replay.status): \(replay.stderr)")
        let counters = try healthy.stop()
        let secondLines = try Results.read(second)
        #expect(secondLines.count == retryable.count)
        #expect(Set(secondLines.compactMap { $0["line"] as? Int }) == Set(retryable.compactMap { $0["line"] as? Int }))
        #expect(
            secondLines.allSatisfy { $0["outcome"] as? String == "delivered" || $0["outcome"] as? String == "prune" })
        #expect(counters["requests"] as? Int == retryable.count, "replay sent something that was not retryable")
    }

    @Test("kill -9 during a send, then --resume: one final line per record, nothing delivered twice")
    func killAndResume() throws {
        let total = 20_000
        let run = try InterruptedSend(records: total, rate: 4000, latency: "1..4ms", waitForBytes: 400_000)
        let (mock, send, results) = (run.mock, run.send, run.results)
        let written = run.written
        kill(send.processIdentifier, SIGKILL)
        send.waitUntilExit()
        #expect(written > 0, "the send wrote nothing before the kill")
        let partial = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n").count
        #expect(partial < total, "the send finished before it could be killed")

        let resume = try Tool.run(["send", run.campaign, "--results", results, "--resume"] + mock.clientArguments)
        #expect(resume.status == 0 || resume.status == 3, "exit \(resume.status): \(resume.stderr)")
        let counters = try mock.stop()

        let lines = try Results.read(results)
        var perLine: [Int: Int] = [:]
        for line in lines { perLine[line["line"] as? Int ?? 0, default: 0] += 1 }
        #expect(perLine.count == total, "records without a final line")
        #expect(perLine.values.allSatisfy { $0 == 1 }, "records with two final lines")
        let delivered = lines.filter { $0["outcome"] as? String == "delivered" }.count
        let inDoubt = lines.filter { $0["outcome"] as? String == "in_doubt" }.count
        let ok = (counters["by_status"] as? [String: Int])?["200"] ?? 0
        #expect((counters["requests"] as? Int ?? 0) <= total, "a record was sent twice")
        #expect(
            ok >= delivered && ok <= delivered + inDoubt, "mock 200s \(ok), delivered \(delivered), in doubt \(inDoubt)"
        )
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"), "the finished run left its journal")
    }

    @Test("SIGINT stops gracefully (exit 5, nothing in doubt), and --resume finishes the run")
    func interruptAndResume() throws {
        let total = 5000
        let run = try InterruptedSend(records: total, rate: 1000, latency: "1..3ms", waitForBytes: 50_000)
        let (mock, send, results, campaign) = (run.mock, run.send, run.results, run.campaign)
        kill(send.processIdentifier, SIGINT)
        send.waitUntilExit()
        #expect(send.terminationStatus == 5, "exit \(send.terminationStatus)")
        let partial = try Results.read(results)
        #expect(partial.count > 0 && partial.count < total)
        #expect(partial.allSatisfy { $0["outcome"] as? String == "delivered" }, "a graceful stop waits for answers")

        let resume = try Tool.run(["send", campaign, "--results", results, "--resume"] + mock.clientArguments)
        #expect(resume.status == 0, "exit \(resume.status): \(resume.stderr)")
        let counters = try mock.stop()
        let lines = try Results.read(results)
        #expect(lines.count == total)
        #expect(Set(lines.compactMap { $0["line"] as? Int }).count == total)
        #expect(counters["requests"] as? Int == total, "a record was sent twice")
    }
}

/// A `send` of a generated campaign to a slowed-down mock, started in the background and left running until its
/// result file has `waitForBytes` bytes, so a test can kill or interrupt it mid-run.
struct InterruptedSend {
    let directory: TemporaryDirectory
    let campaign: String
    let results: String
    let mock: MockProcess
    let send = Process()
    /// The result file's size when the wait ended.
    private(set) var written = 0

    init(records: Int, rate: Int, latency: String, waitForBytes: Int) throws {
        directory = try TemporaryDirectory()
        campaign = directory.file("c.ndjson")
        results = directory.file("results.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records \(records) --out '\(campaign)'")
        mock = try MockProcess(["--fault", "latency=\(latency)"])
        send.executableURL = URL(fileURLWithPath: Tool.binary)
        send.arguments = ["send", campaign, "--results", results, "--rate", "\(rate)"] + mock.clientArguments
        send.standardError = FileHandle.nullDevice
        try send.run()
        let deadline = Date().addingTimeInterval(60 * Tool.timeScale)
        while Date() < deadline {
            written = (try? FileManager.default.attributesOfItem(atPath: results)[.size] as? Int) ?? 0
            if written >= waitForBytes || !send.isRunning { break }
            usleep(10_000)
        }
    }
}
