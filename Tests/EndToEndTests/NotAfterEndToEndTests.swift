import Foundation
import Testing

/// `--not-after`, the campaign's deadline, with the built executable against `apns-bulk mock --log-accepted`: the
/// deadline cuts a running campaign (the rest `expired`, exit status 6), holds across a `kill -9` and the same
/// command run again, and is inherited by `replay` unless a new one is given.
@Suite("--not-after end to end", .serialized)
struct NotAfterEndToEndTests {
    /// Lines of the mock's accepted log (one per notification accepted with a 200).
    private func accepted(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Records per outcome.
    private func counts(_ lines: [[String: Any]]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in lines { counts[line["outcome"] as? String ?? "?", default: 0] += 1 }
        return counts
    }

    /// The deadline the campaign record beside `results` holds, in seconds since the epoch.
    private func deadline(_ results: String) throws -> Double {
        let data = try Data(contentsOf: URL(fileURLWithPath: results + ".campaign"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return try #require(object?["notAfter"] as? Double, "no deadline in the campaign record")
    }

    /// Holds each record to exactly one line, `total` in all.
    private func expectOneLineEach(_ lines: [[String: Any]], total: Int) {
        var perLine: [Int: Int] = [:]
        for line in lines { perLine[line["line"] as? Int ?? 0, default: 0] += 1 }
        #expect(perLine.count == total, "\(perLine.count) of \(total) records have a line")
        #expect(perLine.values.allSatisfy { $0 == 1 }, "a record with two lines")
    }

    @Test(
        "the deadline cuts a running campaign: some delivered, the rest expired, nothing sent after it; replay keeps it"
    )
    func deadlineCutsTheCampaign() throws {
        let out = try TemporaryDirectory()
        let campaign = out.file("c.ndjson")
        let total = 400
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records \(total) --out '\(campaign)'")
        let log = out.file("accepted.ndjson")
        // Every tenth request answered 500, given up at once: retryable lines for the replays below.
        let mock = try MockProcess(["--log-accepted", log, "--fault", "500=every:10"])
        let results = out.file("r.ndjson")
        let started = Date()
        let run = try Tool.run(
            [
                "send", campaign, "--results", results, "--rate", "60", "--max-attempts", "1",
                "--not-after", "2s",
            ] + mock.clientArguments)
        let ended = Date().timeIntervalSince1970
        #expect(run.status == 6, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("DEADLINE PASSED"), "\(run.stderr)")
        let lines = try Results.read(results)
        expectOneLineEach(lines, total: total)
        let byOutcome = counts(lines)
        let delivered = byOutcome["delivered"] ?? 0
        let expired = byOutcome["expired"] ?? 0
        #expect(delivered > 20 && expired > 100, "\(byOutcome)")
        #expect(
            lines.filter { $0["outcome"] as? String == "expired" }.allSatisfy {
                ($0["detail"] as? String)?.hasPrefix("not sent by the --not-after deadline") == true
                    && ($0["attempts"] as? Int ?? 0) == 0
            })
        // Nothing went out after the deadline: the run ended with it, and the mock accepted exactly the delivered.
        let notAfter = try deadline(results)
        // Two seconds after the campaign's first start as its record gives it (the process may start late on a
        // loaded machine), and that start within the run.
        let record =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: results + ".campaign")))
            as? [String: Any]
        let startedAt = try #require(record?["startedAt"] as? Double)
        #expect(abs(notAfter - (startedAt + 2)) < 0.01, "the deadline is not 2 s after the first start")
        #expect(
            startedAt >= started.timeIntervalSince1970 - 1 && startedAt <= ended, "the first start is not this run's")
        #expect(ended < notAfter + 3, "the run went on \(ended - notAfter) s past its deadline")
        let acceptedTokens = Set(
            accepted(log).compactMap { line in
                (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["token"] as? String
            })
        let deliveredTokens = Set(
            lines.filter { $0["outcome"] as? String == "delivered" }.compactMap { $0["token"] as? String })
        #expect(
            accepted(log).count == delivered && acceptedTokens == deliveredTokens,
            "accepted \(accepted(log).count), delivered \(delivered)")
        // The deadline belongs to the campaign: the same result file with another one is refused, nothing sent.
        let moved = try Tool.run(["send", campaign, "--results", results, "--not-after", "1h"] + mock.clientArguments)
        #expect(moved.status == 64 && moved.stderr.contains("--not-after"), "exit \(moved.status): \(moved.stderr)")
        #expect(accepted(log).count == delivered)
        _ = try mock.stop()

        // A replay inherits the deadline: past it, it sends nothing and its records end expired.
        let retryable = byOutcome["retryable"] ?? 0
        #expect(retryable > 0, "\(byOutcome)")
        let healthyLog = out.file("replay-accepted.ndjson")
        let healthy = try MockProcess(["--log-accepted", healthyLog])
        let inherited = out.file("inherited.ndjson")
        let late = try Tool.run(["replay", results, "--results", inherited] + healthy.replayArguments)
        #expect(late.status == 6, "exit \(late.status): \(late.stderr)")
        let lateLines = try Results.read(inherited)
        #expect(
            lateLines.count == retryable && lateLines.allSatisfy { $0["outcome"] as? String == "expired" },
            "\(counts(lateLines))")
        #expect(accepted(healthyLog).isEmpty, "the replay sent past the deadline it inherited")
        #expect(try deadline(inherited) == notAfter)

        // Given a new deadline, a replay sends what the old one cut: the retryable records and the expired ones.
        let again = out.file("again.ndjson")
        let replay = try Tool.run(
            ["replay", results, "--results", again, "--not-after", "1h"] + healthy.replayArguments)
        #expect(replay.status == 0, "exit \(replay.status): \(replay.stderr)")
        let againLines = try Results.read(again)
        #expect(againLines.count == retryable + expired)
        #expect(againLines.allSatisfy { $0["outcome"] as? String == "delivered" }, "\(counts(againLines))")
        #expect(accepted(healthyLog).count == retryable + expired)
        _ = try healthy.stop()
    }

    @Test("kill -9 mid-campaign, then the same command after the deadline: nothing sent, the rest expired")
    func killThenRunAgainAfterTheDeadline() throws {
        let out = try TemporaryDirectory()
        let campaign = out.file("c.ndjson")
        let total = 2000
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records \(total) --out '\(campaign)'")
        let log = out.file("accepted.ndjson")
        let mock = try MockProcess(["--log-accepted", log, "--fault", "latency=2..5ms"])
        let results = out.file("r.ndjson")
        let arguments =
            ["send", campaign, "--results", results, "--rate", "100", "--not-after", "3s"] + mock.clientArguments
        let send = Process()
        send.executableURL = URL(fileURLWithPath: Tool.binary)
        send.arguments = arguments
        send.standardError = FileHandle.nullDevice
        try send.run()
        let wait = Date().addingTimeInterval(30 * Tool.timeScale)
        while Date() < wait, send.isRunning, ((try? Results.completeLines(results)) ?? 0) < 20 { usleep(10_000) }
        kill(send.processIdentifier, SIGKILL)
        send.waitUntilExit()
        let before = try Results.completeLines(results)
        #expect(before >= 20 && before < total, "\(before) lines before the kill")

        let notAfter = try deadline(results)
        while Date().timeIntervalSince1970 < notAfter + 0.2 { usleep(50_000) }
        let acceptedBefore = accepted(log).count
        let again = try Tool.run(arguments)
        #expect(again.status == 6, "exit \(again.status): \(again.stderr)")
        #expect(accepted(log).count == acceptedBefore, "the run after the deadline sent something")
        let lines = try Results.read(results)
        expectOneLineEach(lines, total: total)
        let later = lines.dropFirst(before)
        #expect(
            later.allSatisfy { ["expired", "in_doubt"].contains($0["outcome"] as? String ?? "") },
            "\(counts(Array(later)))")
        #expect(later.filter { $0["outcome"] as? String == "expired" }.count >= total - before - 20)
        #expect(try deadline(results) == notAfter, "the rerun moved the deadline")
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"), "the finished run left its journal")

        // Once finished, the same command again sends nothing and says the campaign's status again.
        let third = try Tool.run(arguments)
        #expect(third.status == 6, "exit \(third.status): \(third.stderr)")
        _ = try mock.stop()
        #expect(accepted(log).count == acceptedBefore)
    }
}
