import Foundation
import Testing

/// A campaign and its replays, read together as one chain (`ResultChain`): a replay of a replay given the
/// original too, `report` and `prune` over all of them, and a replay whose output matches its own input glob the
/// next night. Each audited against the mock's `--log-accepted`: nothing accepted twice.
@Suite("replay chains end to end", .serialized)
struct ReplayChainEndToEndTests {
    /// 3,000 records sent to a mock answering 5 % of requests 500, one attempt each (`--max-attempts 1`), then
    /// replayed once: `results-1.ndjson` (the send) and `results-2.ndjson` (its replay), with retryable lines left
    /// in both (without `replayed`, only the send).
    struct Chain {
        let run: AuditedCampaign
        let first: String
        let second: String

        init(records: Int = 3000, dead: Double = 0, replayed: Bool = true) throws {
            run = try AuditedCampaign(
                records: records, dead: dead, mockFaults: ["--fault", "500=0.05", "--seed", "11"])
            first = run.directory.file("results-1.ndjson")
            second = run.directory.file("results-2.ndjson")
            let send = try Tool.run(
                ["send", run.campaign, "--results", first, "--max-attempts", "1"] + run.mock.clientArguments)
            #expect(send.status == 3, "exit \(send.status): \(send.stderr)")
            guard replayed else { return }
            let replay = try Tool.run(
                ["replay", first, "--results", second, "--max-attempts", "1"] + run.mock.replayArguments)
            #expect(replay.status == 3 || replay.status == 0, "exit \(replay.status): \(replay.stderr)")
        }

        /// Runs `script` in the campaign's folder with the built tool first on the PATH.
        func shell(_ script: String) throws -> Tool.Result {
            try RunFilesEndToEndTests.shell(
                "cd '\(run.directory.path)' && PATH='\((Tool.binary as NSString).deletingLastPathComponent)':$PATH; \(script)"
            )
        }

        /// The mock options, quoted for a shell.
        var quotedReplayArguments: String { run.mock.replayArguments.map { "'\($0)'" }.joined(separator: " ") }
    }

    @Test(
        "a replay of the original and its replay sends nothing the replay delivered, whatever the order",
        arguments: [
            "original first", "replay first", "shell glob",
        ])
    func replayOfAReplay(_ order: String) throws {
        let chain = try Chain()
        let delivered = try chain.run.accepted().total
        let third = chain.run.directory.file("results-3.ndjson")
        let result: Tool.Result
        switch order {
        case "original first":
            result = try Tool.run(
                ["replay", chain.first, chain.second, "--results", third] + chain.run.mock.replayArguments)
        case "replay first":
            result = try Tool.run(
                ["replay", chain.second, chain.first, "--results", third] + chain.run.mock.replayArguments)
        default:
            result = try chain.shell(
                "apns-bulk replay results-*.ndjson --results results-3.ndjson \(chain.quotedReplayArguments)")
        }
        #expect(result.status == 0 || result.status == 3, "exit \(result.status): \(result.stderr)")
        try chain.run.expectNothingAcceptedTwice()
        // It sent exactly what was still retryable after the first replay: the second one's retryable lines.
        let left = try Results.read(chain.second).filter { $0["outcome"] as? String == "retryable" }.count
        let sent = try Results.read(third).count
        #expect(sent == left, "the replay of both sent \(sent), not the \(left) left")
        #expect(try chain.run.accepted().total > delivered)
    }

    @Test(
        "report over a chain counts each record once and its next step, run as printed, delivers every record exactly once"
    )
    func reportCountsEachRecordOnce() throws {
        let chain = try Chain()
        let json = chain.run.directory.file("report.json")
        let report = try Tool.run(["report", chain.second, chain.first, "--json", json])
        #expect(report.status == 0, "exit \(report.status): \(report.stderr)")
        let figures = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        #expect(
            figures["records"] as? Int == 3000, "\(figures["records"] ?? "none") records for a 3,000-record campaign")
        let outcomes = try #require(figures["outcomes"] as? [String: Int])
        #expect(outcomes["delivered"] == (try chain.run.accepted().total), "\(outcomes)")
        #expect(report.stderr.hasPrefix("3000 records"), "\(report.stderr)")

        // Follow the report's next step (the safe one first: without in-doubt records, which may have arrived
        // already), then report again, until nothing is left to replay.
        var files = [chain.first, chain.second]
        var inDoubt = 0
        for round in 1...6 {
            try JSONSerialization.data(withJSONObject: [:]).write(to: URL(fileURLWithPath: json))
            let again = try Tool.run(["report"] + files + ["--json", json], directory: chain.run.directory.path)
            #expect(again.status == 0, "exit \(again.status): \(again.stderr)")
            let figures = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
            #expect(figures["records"] as? Int == 3000, "round \(round): \(figures["records"] ?? "none") records")
            let next = figures["next_steps"] as? [String: Any] ?? [:]
            inDoubt = (figures["outcomes"] as? [String: Int])?["in_doubt"] ?? 0
            guard let command = (next["replay_excluding_in_doubt"] ?? next["replay"]) as? String,
                next["replay_excluding_in_doubt"] != nil || inDoubt == 0
            else { break }
            let output = try #require(command.components(separatedBy: " --results ").last)
            // As printed: the command carries the campaign's endpoint, CA file and key (read from its record).
            #expect(command.contains(" --endpoint ") && command.contains(" --key-id "), "\(command)")
            let replay = try chain.shell("\(command) --max-attempts 1")
            #expect(replay.status == 0 || replay.status == 3, "round \(round): exit \(replay.status): \(replay.stderr)")
            try chain.run.expectNothingAcceptedTwice()
            files.append(chain.run.directory.file(output))
        }
        // Every record delivered, but for in-doubt ones (a slow run, as under a sanitizer, can lose answers)
        // that the mock never accepted.
        let accepted = try chain.run.accepted().total
        #expect(accepted <= 3000 && accepted >= 3000 - inDoubt, "\(accepted) of 3000 delivered, \(inDoubt) in doubt")
        try chain.run.expectNothingAcceptedTwice()
    }

    @Test("prune over a chain lists each dead token once")
    func pruneListsEachTokenOnce() throws {
        let chain = try Chain(records: 2000, dead: 0.05)
        let prune = try Tool.run(["prune", chain.second, chain.first])
        #expect(prune.status == 0, "exit \(prune.status): \(prune.stderr)")
        let listed = prune.stdout.split(separator: "\n").map(String.init)
        let dead = Set(
            try (Results.read(chain.first) + Results.read(chain.second))
                .filter { $0["outcome"] as? String == "prune" }.compactMap { $0["token"] as? String })
        #expect(listed.count == Set(listed).count, "a token listed twice")
        #expect(Set(listed) == dead, "\(listed.count) listed, \(dead.count) dead")
        #expect(dead.count > 50, "\(dead.count) dead tokens")
    }

    @Test("a replay whose output matches its own input glob: the next night it drops its output and sends nothing")
    func replayOutputInItsOwnGlob() throws {
        let chain = try Chain(replayed: false)
        let nightly = "apns-bulk replay results-*.ndjson --results results-replay.ndjson \(chain.quotedReplayArguments)"
        let first = try chain.shell(nightly)
        #expect(first.status == 0 || first.status == 3, "exit \(first.status): \(first.stderr)")
        let accepted = try chain.run.accepted().total
        let written = try Data(contentsOf: URL(fileURLWithPath: chain.run.directory.file("results-replay.ndjson")))

        let second = try chain.shell(nightly)
        #expect(second.status == first.status, "exit \(second.status): \(second.stderr)")
        #expect(
            second.stderr.contains("results-replay.ndjson is this replay's own result file: left out of its inputs"),
            "\(second.stderr)")
        #expect(second.stderr.contains("nothing sent"), "\(second.stderr)")
        #expect(try chain.run.accepted().total == accepted, "the second night sent again")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: chain.run.directory.file("results-replay.ndjson"))) == written)

        // A night whose glob also gained a new result file is another campaign on that result file: refused.
        try FileManager.default.copyItem(atPath: chain.first, toPath: chain.run.directory.file("results-new.ndjson"))
        let third = try chain.shell(nightly)
        #expect(third.status == 64, "exit \(third.status): \(third.stderr)")
        #expect(third.stderr.contains("another campaign"), "\(third.stderr)")
        #expect(try chain.run.accepted().total == accepted)
        try chain.run.expectNothingAcceptedTwice()
    }
}
