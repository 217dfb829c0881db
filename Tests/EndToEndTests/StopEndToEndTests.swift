import Foundation
import Testing

/// A stop is not a finish: campaigns stopped by a campaign-wide cause (the other environment's tokens, another
/// app's tokens, wrong credentials, a wrong topic, an endpoint that does not answer) list no token for pruning, and
/// the exact command each stop prints, followed as a person would (the placeholder filled in, the endpoint and CA
/// file of the right server), continues the campaign: every record delivered once, audited against the mocks'
/// `--log-accepted` logs, and the same command again sends nothing.
@Suite("stopped campaigns end to end", .serialized)
struct StopEndToEndTests {
    /// A campaign of `count` records whose tokens end in `suffix` (the mock's suffix rules: `0bad` answers
    /// BadDeviceToken, `f0f0` DeviceTokenNotForTopic).
    static func campaign(in directory: TemporaryDirectory, count: Int, suffix: String) throws -> String {
        let path = directory.file("campaign.ndjson")
        let lines = (0..<count).map { index in
            let hex = String(index, radix: 16)
            let token = "a" + String(repeating: "0", count: 63 - hex.count - suffix.count) + hex + suffix
            return #"{"token":"\#(token)","payload":{"aps":{"alert":"hello"}}}"#
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The command a stop's "what to do" line ends with.
    static func printedCommand(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let hint = try #require(
            stderr.split(separator: "\n").first { $0.hasPrefix("apns-bulk: what to do:") },
            "no what-to-do line: \(stderr)", sourceLocation: sourceLocation)
        let start = try #require(
            hint.range(of: ": apns-bulk "), "no command in: \(hint)", sourceLocation: sourceLocation)
        return String(hint[hint.index(start.lowerBound, offsetBy: 2)...])
    }

    /// Runs a printed command in a shell, the built binary first on the PATH, with `replacements` made first.
    static func follow(_ command: String, replacing replacements: [(String, String)], in directory: TemporaryDirectory)
        throws -> Tool.Result
    {
        var filled = command
        for (old, new) in replacements { filled = filled.replacingOccurrences(of: old, with: new) }
        let bin = (Tool.binary as NSString).deletingLastPathComponent
        return try RunFilesEndToEndTests.shell("cd '\(directory.path)' && PATH='\(bin)':$PATH; \(filled)")
    }

    static func outcomes(_ results: String) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in try Results.read(results) { counts[line["outcome"] as? String ?? "?", default: 0] += 1 }
        return counts
    }

    @Test(
        "every token BadDeviceToken (the other environment): exit 4, nothing to prune; the printed command with the right endpoint delivers all once"
    )
    func otherEnvironment() throws {
        let directory = try TemporaryDirectory()
        let campaign = try Self.campaign(in: directory, count: 3000, suffix: "0bad")
        let wrongLog = directory.file("wrong-accepted.ndjson")
        let wrong = try MockProcess(["--log-accepted", wrongLog])
        let results = directory.file("results.ndjson")
        let stopped = try Tool.run(["send", campaign, "--results", results] + wrong.clientArguments)
        #expect(stopped.status == 4, "exit \(stopped.status): \(stopped.stderr)")
        #expect(stopped.stderr.contains("STOPPED EARLY: BadDeviceToken for every token of topic"), "\(stopped.stderr)")
        let outcomes = try Self.outcomes(results)
        #expect(outcomes["prune"] == nil, "tokens listed for deletion: \(outcomes)")
        #expect((outcomes["retryable"] ?? 0) + (outcomes["not_sent"] ?? 0) == 3000, "\(outcomes)")
        #expect((outcomes["retryable"] ?? 3000) < 200, "\(outcomes): the stop came late")
        let prune = try Tool.run(["prune", results])
        #expect(prune.status == 0 && prune.stdout.isEmpty, "prune lists: \(prune.stdout.prefix(200)) \(prune.stderr)")
        #expect(
            prune.stderr.contains("stopped early (BadDeviceToken"),
            "prune does not say the campaign stopped: \(prune.stderr)")

        // The right environment: a server that accepts these tokens.
        let rightLog = directory.file("right-accepted.ndjson")
        let right = try MockProcess(["--log-accepted", rightLog, "--no-suffix-rules"])
        let command = try Self.printedCommand(stopped.stderr)
        #expect(command.contains("--endpoint YOUR_ENDPOINT"), "\(command)")
        let replacements = [("YOUR_ENDPOINT", "https://127.0.0.1:\(right.port)"), (wrong.caFile, right.caFile)]
        let continued = try Self.follow(command, replacing: replacements, in: directory)
        #expect(continued.status == 0, "exit \(continued.status): \(continued.stderr)")
        #expect(continued.stderr.contains("continuing the campaign"), "\(continued.stderr)")
        #expect(try Self.outcomes(results) == ["delivered": 3000])
        let accepted = try AuditedCampaign.accepted(inLog: rightLog)
        #expect(accepted.total == 3000 && accepted.perToken.values.allSatisfy { $0 == 1 }, "\(accepted.total) accepted")
        #expect(try AuditedCampaign.accepted(inLog: wrongLog).total == 0)

        let again = try Self.follow(command, replacing: replacements, in: directory)
        #expect(again.status == 0 && again.stderr.contains("nothing sent"), "exit \(again.status): \(again.stderr)")
        #expect(try AuditedCampaign.accepted(inLog: rightLog).total == 3000, "the same command sent again")
        _ = try wrong.stop()
        _ = try right.stop()
    }

    @Test("every token DeviceTokenNotForTopic (another app's): exit 4, nothing to prune, the command names --topic")
    func anotherAppsTokens() throws {
        let directory = try TemporaryDirectory()
        let campaign = try Self.campaign(in: directory, count: 500, suffix: "f0f0")
        let mock = try MockProcess()
        let results = directory.file("results.ndjson")
        let stopped = try Tool.run(["send", campaign, "--results", results] + mock.clientArguments)
        #expect(stopped.status == 4, "exit \(stopped.status): \(stopped.stderr)")
        #expect(try Self.outcomes(results)["prune"] == nil)
        #expect(try Self.printedCommand(stopped.stderr).contains("--topic YOUR_TOPIC"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("another app"), "\(stopped.stderr)")
        _ = try mock.stop()
    }

    @Test("a wrong key id: the printed command with the right id continues the campaign; nothing accepted twice")
    func wrongCredentialsContinued() throws {
        let run = try AuditedCampaign(records: 600, dead: 0.01)
        var arguments = run.send()
        arguments[arguments.firstIndex(of: MockProcess.keyID)!] = "WRONG12345"
        let stopped = try Tool.run(arguments)
        #expect(stopped.status == 4, "exit \(stopped.status): \(stopped.stderr)")
        let command = try Self.printedCommand(stopped.stderr)
        #expect(command.contains("--key-id WRONG12345"), "\(command)")
        let continued = try Self.follow(command, replacing: [("WRONG12345", MockProcess.keyID)], in: run.directory)
        #expect(continued.status == 0, "exit \(continued.status): \(continued.stderr)")
        #expect(try run.accepted().total == 594)
        try run.expectNothingAcceptedTwice()
        try run.expectOneFinalLineEach(total: 600)
    }

    @Test(
        "a wrong topic: the printed command with the topic filled in delivers every record once, those APNs refused included"
    )
    func wrongTopicContinued() throws {
        let run = try AuditedCampaign(records: 400)
        let (arguments, stopped) = try run.sendStoppedForTopic("com.wrong.app")
        let command = try Self.printedCommand(stopped.stderr)
        #expect(command.contains("--topic YOUR_TOPIC"), "\(command)")
        let continued = try Self.follow(command, replacing: [("YOUR_TOPIC", MockProcess.topic)], in: run.directory)
        #expect(continued.status == 0, "exit \(continued.status): \(continued.stderr)")
        #expect(try run.accepted().total == 400)
        try run.expectNothingAcceptedTwice()
        #expect(try Self.outcomes(run.results) == ["delivered": 400])
        // The fixed command again sends nothing; the command as it first ran is now another campaign: refused.
        let again = try Self.follow(command, replacing: [("YOUR_TOPIC", MockProcess.topic)], in: run.directory)
        #expect(again.status == 0 && again.stderr.contains("nothing sent"), "exit \(again.status): \(again.stderr)")
        let old = try Tool.run(arguments)
        #expect(old.status == 64, "exit \(old.status): \(old.stderr)")
        #expect(try run.accepted().total == 400)
    }

    @Test(
        "report on a stopped campaign proposes the campaign's own command, not a replay; it delivers every record once")
    func reportProposesContinuing() throws {
        let run = try AuditedCampaign(records: 200)
        _ = try run.sendStoppedForTopic("com.wrong.app")
        let json = run.directory.file("report.json")
        let html = run.directory.file("report.html")
        let report = try Tool.run(["report", run.results, "--json", json, "--html", html])
        #expect(report.status == 0, "exit \(report.status): \(report.stderr)")
        #expect(report.stderr.contains("stopped early"), "\(report.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let next = try #require(object["next_steps"] as? [String: Any])
        #expect(next["replay"] == nil, "a replay proposed for a stopped campaign: \(next)")
        let commands = try #require(next["continue"] as? [String])
        #expect(commands.count == 1)
        let command = try #require(commands.first)
        #expect(command.hasPrefix("apns-bulk send ") && command.contains("--topic YOUR_TOPIC"), "\(command)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("This campaign stopped early") && !page.contains("id=\"replay-command\""))

        let continued = try Self.follow(command, replacing: [("YOUR_TOPIC", MockProcess.topic)], in: run.directory)
        #expect(continued.status == 0, "exit \(continued.status): \(continued.stderr)")
        #expect(try run.accepted().total == 200)
        try run.expectNothingAcceptedTwice()
        #expect(try Self.outcomes(run.results) == ["delivered": 200])
        // Finished now: the report proposes nothing more.
        let after = try Tool.run(["report", run.results, "--json", json])
        let finished = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        #expect(after.status == 0 && (finished["next_steps"] as? [String: Any])?.isEmpty == true, "\(finished)")
    }

    @Test(
        "nothing left to send needs no connection: a replay of a finished campaign, and a send of invalid records only, end at once while APNs is unreachable"
    )
    func nothingToSendNeedsNoConnection() throws {
        let run = try AuditedCampaign(records: 50)
        let sent = try Tool.run(run.send())
        #expect(sent.status == 0, "exit \(sent.status): \(sent.stderr)")
        let port = try RunFilesEndToEndTests.closedPort(in: run.directory)
        func unreachable(_ arguments: [String]) -> [String] {
            var arguments = arguments
            arguments[arguments.firstIndex(of: "https://127.0.0.1:\(run.mock.port)")!] = "https://127.0.0.1:\(port)"
            return arguments
        }
        let replayResults = run.directory.file("replay.ndjson")
        let started = Date()
        let replay = try Tool.run(
            unreachable(["replay", run.results, "--results", replayResults] + run.mock.replayArguments))
        #expect(replay.status == 0, "exit \(replay.status): \(replay.stderr)")
        #expect(try Results.read(replayResults).isEmpty)

        let invalid = run.directory.file("invalid.ndjson")
        try (0..<20).map { #"{"token":"abc\#($0)","payload":{"aps":{"alert":"hi"}}}"# }.joined(separator: "\n")
            .appending("\n").write(toFile: invalid, atomically: true, encoding: .utf8)
        let invalidResults = run.directory.file("invalid-results.ndjson")
        let none = try Tool.run(unreachable(["send", invalid, "--results", invalidResults] + run.mock.clientArguments))
        #expect(none.status == 2, "exit \(none.status): \(none.stderr)")
        #expect(try Self.outcomes(invalidResults) == ["input_error": 20])
        // The give-up rule needs 20 s of refused connections: neither run waited for it.
        #expect(Date().timeIntervalSince(started) < 15 * Tool.timeScale)
        #expect(try run.accepted().total == 50)
    }

    @Test(
        "an endpoint nothing answers: a failed start, one error line, no file; the right endpoint then sends all once")
    func endpointNothingAnswers() throws {
        let run = try AuditedCampaign(records: 200)
        // A port nobody listens on: every connection refused, the give-up rule's 20 s.
        let port = try RunFilesEndToEndTests.closedPort(in: run.directory)
        var arguments = run.send()
        arguments[arguments.firstIndex(of: "https://127.0.0.1:\(run.mock.port)")!] = "https://127.0.0.1:\(port)"
        let failed = try Tool.run(arguments, timeout: 120)
        #expect(failed.status == 4, "exit \(failed.status): \(failed.stderr)")
        let errors = failed.stderr.split(separator: "\n").filter { $0.hasPrefix("apns-bulk: error:") }
        #expect(errors.count == 1 && errors[0].contains("nothing was sent"), "\(failed.stderr)")
        #expect(!failed.stderr.contains("STOPPED EARLY"), "\(failed.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: run.directory.path).filter {
            $0.hasPrefix("results")
        }
        #expect(left.isEmpty, "left behind: \(left)")

        let fixed = try Tool.run(run.send())
        #expect(fixed.status == 0, "exit \(fixed.status): \(fixed.stderr)")
        #expect(!fixed.stderr.contains("already finished"), "\(fixed.stderr)")
        #expect(try run.accepted().total == 200)
        try run.expectNothingAcceptedTwice()
    }
}
