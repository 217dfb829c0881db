import Foundation
import Testing

/// Running a campaign again, the way people and schedulers do: the same command twice, a killed run started
/// again without `--resume`, a changed campaign on an old result file, a replay repeated, `report` and `prune` on
/// an unfinished run, a wrong topic fixed the way the report says, start-up failures and campaign-wide mistakes.
/// Every test audits the mock's own log of accepted notifications (`--log-accepted`): nothing is accepted twice.
@Suite("running again end to end", .serialized)
struct RerunEndToEndTests {
    @Test(
        "the same send twice: the second sends nothing, leaves the result file as it was and exits with the campaign's status"
    )
    func sameCommandTwice() throws {
        let run = try AuditedCampaign(records: 1000, dead: 0.01)
        let first = try Tool.run(run.send())
        #expect(first.status == 0, "exit \(first.status): \(first.stderr)")
        let before = try Data(contentsOf: URL(fileURLWithPath: run.results))
        let accepted = try run.accepted()
        #expect(accepted.total == 990, "\(accepted.total) accepted")

        let second = try Tool.run(run.send())
        #expect(second.status == first.status, "exit \(second.status): \(second.stderr)")
        #expect(second.stderr.contains("nothing sent"), "\(second.stderr)")
        #expect(second.stderr.contains("delivered 990"), "no campaign summary: \(second.stderr)")
        #expect(try run.accepted().total == accepted.total, "the second run sent again")
        #expect(try Data(contentsOf: URL(fileURLWithPath: run.results)) == before, "the result file changed")

        // --resume on a finished campaign is the same: nothing to do.
        let resumed = try Tool.run(run.send(["--resume"]))
        #expect(resumed.status == first.status, "exit \(resumed.status): \(resumed.stderr)")
        #expect(try run.accepted().total == accepted.total, "--resume sent again")
    }

    @Test("a campaign read from a pipe (bash's <(...), a FIFO) is sent whole, and the same command again sends nothing")
    func campaignFromAPipe() throws {
        let run = try AuditedCampaign(records: 300)
        // bash's process substitution names a pipe (/dev/fd/63): the campaign must be read once, not first
        // fingerprinted (which left nothing to send: "campaign has no records").
        let command =
            (["\"$0\"", "send", "<(cat \"$1\")", "--results", "\"$2\""] + run.mock.clientArguments.map { "'\($0)'" })
            .joined(separator: " ")
        for round in 1...2 {
            let result = try Tool.run(["-c", command, Tool.binary, run.campaign, run.results], program: "/bin/bash")
            #expect(result.status == 0, "round \(round): exit \(result.status): \(result.stderr)")
            let accepted = try run.accepted().total
            #expect(accepted == 300, "round \(round): \(accepted) accepted")
        }
        #expect(
            try Results.read(run.results).map { $0["outcome"] as? String } == Array(repeating: "delivered", count: 300))
        try run.expectNothingAcceptedTwice()

        // A named FIFO with a writer: the same.
        let fifo = run.directory.file("campaign.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: run.campaign))
        Thread.detachNewThread {  // the writer: its open waits for `send` to open the FIFO for reading
            guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
            handle.write(bytes)
            try? handle.close()
        }
        let results = run.directory.file("fifo-results.ndjson")
        let fromFIFO = try Tool.run(
            ["send", fifo, "--results", results, "--allow-duplicates"] + run.mock.clientArguments)
        #expect(fromFIFO.status == 0, "exit \(fromFIFO.status): \(fromFIFO.stderr)")
        #expect(try Results.read(results).map { $0["outcome"] as? String } == Array(repeating: "delivered", count: 300))
    }

    @Test("CSV on standard input with --input-format csv is sent; without it, it is read as NDJSON and nothing goes")
    func csvFromStandardInput() throws {
        let run = try AuditedCampaign(records: 0)
        let tokens = (0..<50).map { index in String(repeating: String(format: "%02x", index + 16), count: 32) }
        let csv = run.directory.file("users.csv")
        try ("token,name\n" + tokens.map { "\($0),user \($0.prefix(4))\n" }.joined()).write(
            toFile: csv, atomically: true, encoding: .utf8)
        let template = run.directory.file("alert.json")
        try #"{"aps":{"alert":"Hello {{name}}"}}"#.write(toFile: template, atomically: true, encoding: .utf8)
        func send(_ results: String, _ extra: [String]) throws -> Tool.Result {
            let command =
                (["\"$0\"", "send", "-", "--template", "'\(template)'", "--results", "'\(results)'"]
                + (extra + run.mock.clientArguments).map { "'\($0)'" } + ["< \"$1\""]).joined(separator: " ")
            return try Tool.run(["-c", command, Tool.binary, csv], program: "/bin/bash")
        }
        let plain = try send(run.directory.file("as-ndjson.ndjson"), [])
        #expect(plain.status != 0, "CSV read as NDJSON: \(plain.stderr)")
        #expect(try run.accepted().total == 0)
        let sent = try send(run.directory.file("csv.ndjson"), ["--input-format", "csv"])
        #expect(sent.status == 0, "exit \(sent.status): \(sent.stderr)")
        #expect(try run.accepted().total == 50)
        try run.expectNothingAcceptedTwice()
    }

    @Test("a different campaign on a finished result file is refused, naming what differs; --overwrite replaces it")
    func differentCampaignRefused() throws {
        let run = try AuditedCampaign(records: 300)
        #expect(try Tool.run(run.send()).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: run.results))

        // Same path, other content.
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 301 --out '\(run.campaign)'")
        let changed = try Tool.run(run.send())
        #expect(changed.status == 64, "exit \(changed.status): \(changed.stderr)")
        #expect(changed.stderr.contains("c.ndjson") && changed.stderr.contains("changed"), "\(changed.stderr)")
        #expect(changed.stderr.contains("--overwrite"), "\(changed.stderr)")
        // An option that changes what is sent.
        let priority = try Tool.run(run.send(["--priority", "5"]))
        #expect(priority.status == 64, "exit \(priority.status): \(priority.stderr)")
        #expect(priority.stderr.contains("--priority"), "\(priority.stderr)")
        #expect(try run.accepted().total == 300, "a refused run sent something")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: run.results)) == before, "a refused run touched the result file")

        let overwritten = try Tool.run(run.send(["--overwrite"]))
        #expect(overwritten.status == 0, "exit \(overwritten.status): \(overwritten.stderr)")
        #expect(try Results.read(run.results).count == 301)
    }

    @Test("a send killed with -9, then the same command without --resume: it continues; nothing accepted twice")
    func killedRunContinues() throws {
        let run = try AuditedCampaign(records: 4000, latency: "1..3ms")
        try run.sendKilledMidRun()
        #expect(try Results.completeLines(run.results) < 4000, "the send finished before it could be killed")

        let again = try Tool.run(run.send())
        #expect(again.status == 0 || again.status == 3, "exit \(again.status): \(again.stderr)")
        #expect(again.stderr.contains("continuing"), "\(again.stderr)")
        try run.expectOneFinalLineEach(total: 4000)
        try run.expectNothingAcceptedTwice()
        // And once more: finished, nothing sent.
        let accepted = try run.accepted().total
        let third = try Tool.run(run.send())
        #expect(third.status == again.status, "exit \(third.status): \(third.stderr)")
        #expect(try run.accepted().total == accepted)
    }

    @Test("the same replay twice: the second sends nothing")
    func replayTwice() throws {
        let run = try AuditedCampaign(records: 600, mockFaults: ["--fault", "503=0.1", "--seed", "7"])
        let first = try Tool.run(run.send(["--max-attempts", "1"]))
        #expect(first.status == 3, "exit \(first.status): \(first.stderr)")
        let retryable = try Results.read(run.results).filter { $0["outcome"] as? String == "retryable" }.count
        #expect(retryable > 10, "\(retryable) retryable")

        let replayResults = run.directory.file("replay.ndjson")
        let replay = ["replay", run.results, "--results", replayResults] + run.mock.replayArguments
        let once = try Tool.run(replay)
        #expect(once.status == 0 || once.status == 3, "exit \(once.status): \(once.stderr)")
        let accepted = try run.accepted().total
        let replayed = try Data(contentsOf: URL(fileURLWithPath: replayResults))
        let twice = try Tool.run(replay)
        #expect(twice.status == once.status, "exit \(twice.status): \(twice.stderr)")
        #expect(twice.stderr.contains("nothing sent"), "\(twice.stderr)")
        #expect(try run.accepted().total == accepted, "the second replay sent again")
        #expect(try Data(contentsOf: URL(fileURLWithPath: replayResults)) == replayed)
        try run.expectNothingAcceptedTwice()
    }

    @Test("report and prune on a killed run say it is unfinished and print the command that finishes it")
    func reportOnUnfinishedRun() throws {
        let run = try AuditedCampaign(records: 4000, latency: "1..3ms")
        try run.sendKilledMidRun()
        let answered = try Results.completeLines(run.results)  // a kill -9 may leave a torn last line

        let html = run.directory.file("report.html")
        let report = try Tool.run(["report", run.results, "--html", html, "--json", run.directory.file("report.json")])
        #expect(report.status == 0, "exit \(report.status): \(report.stderr)")
        #expect(report.stderr.contains("unfinished"), "\(report.stderr)")
        #expect(report.stderr.contains("\(answered) records answered so far"), "\(report.stderr)")
        #expect(report.stderr.contains("apns-bulk send"), "no command to finish it: \(report.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(!page.contains("every record has its final outcome"), "the page calls an unfinished run complete")
        #expect(page.contains("unfinished"))
        let json =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: run.directory.file("report.json")))) as? [String: Any]
        #expect((json?["unfinished"] as? [String])?.count == 1, "\(json ?? [:])")

        let prune = try Tool.run(["prune", run.results])
        #expect(prune.status == 0, "exit \(prune.status): \(prune.stderr)")
        #expect(prune.stderr.contains("unfinished") && prune.stderr.contains("apns-bulk send"), "\(prune.stderr)")

        // The printed command finishes it.
        let command = try #require(report.stderr.split(separator: "\n").first { $0.contains("apns-bulk send") })
        let finish = try RunFilesEndToEndTests.shell(
            "PATH='\((Tool.binary as NSString).deletingLastPathComponent)':$PATH; "
                + String(command[command.range(of: "apns-bulk send")!.lowerBound...]))
        #expect(finish.status == 0 || finish.status == 3, "exit \(finish.status): \(finish.stderr)")
        try run.expectOneFinalLineEach(total: 4000)
        try run.expectNothingAcceptedTwice()
    }

    @Test(
        "a wrong topic stops the campaign; a replay with the right topic, as RUNNING-AGAIN.md writes it, takes it over and delivers every record once"
    )
    func wrongTopicFixedByReplay() throws {
        let run = try AuditedCampaign(records: 400)
        let (arguments, wrong) = try run.sendStoppedForTopic("com.wrong.app")
        #expect(
            wrong.stderr.contains("what to do: APNs refused the topic com.wrong.app")
                && wrong.stderr.contains("--topic YOUR_TOPIC"),
            "the stop does not name its fix: \(wrong.stderr)")
        #expect(try run.accepted().total == 0)

        let html = run.directory.file("report.html")
        let report = try Tool.run(["report", run.results, "--html", html])
        #expect(report.status == 0, "exit \(report.status): \(report.stderr)")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        #expect(page.contains("Rejected"), "the rejected requests have no card of their own")
        let continuing = try #require(
            Self.preText(page, class: "continue-command"), "no command that continues the campaign")
        #expect(continuing.contains("--topic YOUR_TOPIC"), "\(continuing)")
        let command = "apns-bulk replay results.ndjson --topic YOUR_TOPIC --results fixed.ndjson"

        // The user fills in the topic and points the command at the mock, as they would at APNs.
        let filled = command.replacingOccurrences(of: "YOUR_TOPIC", with: MockProcess.topic)
        let quoted = run.mock.replayArguments.map { "'\($0)'" }.joined(separator: " ")
        let replay = try RunFilesEndToEndTests.shell(
            "cd '\(run.directory.path)' && PATH='\((Tool.binary as NSString).deletingLastPathComponent)':$PATH; \(filled) \(quoted)"
        )
        #expect(replay.status == 0, "exit \(replay.status): \(replay.stderr)")
        let accepted = try run.accepted()
        #expect(accepted.total == 400, "\(accepted.total) of 400 delivered after the fix")
        try run.expectNothingAcceptedTwice()

        // The replay took over the stopped campaign: its own command, run again (as a scheduler would), sends
        // nothing the replay delivered.
        let again = try Tool.run(arguments)
        #expect(again.stderr.contains("nothing sent") && again.stderr.contains("a replay took over"), "\(again.stderr)")
        #expect(try run.accepted().total == 400, "the stopped campaign's command sent again after its replay")
    }

    @Test(
        "start-up failures print one error line and leave no file behind",
        arguments: [
            "csv-without-header", "template-column-missing", "empty-csv", "directory",
        ])
    func failedStartsLeaveNothing(_ kind: String) throws {
        let mock = try MockProcess()
        let directory = try TemporaryDirectory()
        var inputs: [String] = []
        var extra: [String] = []
        switch kind {
        case "csv-without-header":
            let path = directory.file("rows.csv")
            try Data("84cdeaaf1d1066b11c836f0354a3bb6894b7543d70626fccd99540fb6a1771e0,Ana\n".utf8).write(
                to: URL(fileURLWithPath: path))
            inputs = [path]
            extra = ["--template", Tool.path("samples/template.json")]
        case "template-column-missing":
            let path = directory.file("users.csv")
            try Data("token,first_name\n84cdeaaf1d1066b11c836f0354a3bb6894b7543d70626fccd99540fb6a1771e0,Ana\n".utf8)
                .write(to: URL(fileURLWithPath: path))
            inputs = [path]
            extra = ["--template", Tool.path("samples/template.json")]
        case "empty-csv":
            let path = directory.file("empty.csv")
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            inputs = [path]
            extra = ["--template", Tool.path("samples/template.json")]
        default:
            let path = directory.file("campaigns")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            inputs = [path]
        }
        let results = directory.file("results.ndjson")
        let run = try Tool.run(["send"] + inputs + ["--results", results] + extra + mock.clientArguments)
        #expect(run.status == 1, "\(kind): exit \(run.status): \(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(kind): \(run.stderr)")
        #expect(!run.stderr.contains("STOPPED EARLY"), "\(kind): \(run.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("results")
        }
        #expect(left.isEmpty, "\(kind): left behind \(left)")
        _ = try mock.stop()
    }

    @Test("no topic anywhere is refused before the first request, naming the setting; an empty campaign is not success")
    func campaignWideMistakes() throws {
        let run = try AuditedCampaign(records: 200)
        var arguments = run.send()
        let topic = arguments.firstIndex(of: "--topic")!
        arguments.removeSubrange(topic...(topic + 1))
        let noTopic = try Tool.run(arguments, environment: ["APNS_TOPIC": ""])
        #expect(noTopic.status == 64, "exit \(noTopic.status): \(noTopic.stderr)")
        #expect(noTopic.stderr.contains("--topic"), "\(noTopic.stderr)")
        #expect(!FileManager.default.fileExists(atPath: run.results), "a result file was created")
        #expect(try run.accepted().total == 0)

        let empty = run.directory.file("empty.ndjson")
        _ = FileManager.default.createFile(atPath: empty, contents: Data("\n\n".utf8))
        let emptyRun = try Tool.run(
            ["send", empty, "--results", run.directory.file("empty-results.ndjson")]
                + run.mock.clientArguments)
        #expect(emptyRun.status == 1, "exit \(emptyRun.status): \(emptyRun.stderr)")
        #expect(emptyRun.stderr.contains("no records"), "\(emptyRun.stderr)")
        #expect(!FileManager.default.fileExists(atPath: run.directory.file("empty-results.ndjson")))
    }

    /// The text of `<pre id="…">` on a page, unescaped.
    static func preText(_ page: String, id: String) -> String? { preText(page, opening: "<pre id=\"\(id)\">") }

    static func preText(_ page: String, class name: String) -> String? {
        preText(page, opening: "<pre class=\"\(name)\">")
    }

    private static func preText(_ page: String, opening: String) -> String? {
        guard let start = page.range(of: opening),
            let end = page.range(of: "</pre>", range: start.upperBound..<page.endIndex)
        else { return nil }
        return String(page[start.upperBound..<end.lowerBound])
            .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// A generated campaign, a mock that logs every notification it accepts, and the audits over both.
struct AuditedCampaign {
    let directory: TemporaryDirectory
    let campaign: String
    let results: String
    let acceptedLog: String
    let mock: MockProcess

    init(records: Int, dead: Double = 0, latency: String? = nil, mockFaults: [String] = []) throws {
        directory = try TemporaryDirectory()
        campaign = directory.file("c.ndjson")
        results = directory.file("results.ndjson")
        acceptedLog = directory.file("accepted.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records \(records) --dead \(dead) --out '\(campaign)'")
        var faults = mockFaults
        if let latency { faults += ["--fault", "latency=\(latency)"] }
        mock = try MockProcess(["--log-accepted", acceptedLog] + faults)
    }

    /// The campaign's `send` command against the mock.
    func send(_ extra: [String] = []) -> [String] {
        ["send", campaign, "--results", results] + extra + mock.clientArguments
    }

    /// Runs the campaign's command with `--topic` set to `topic` (a wrong one) and expects the stop: exit 4, nothing
    /// accepted. Returns the command and what it printed.
    func sendStoppedForTopic(_ topic: String) throws -> (arguments: [String], result: Tool.Result) {
        var arguments = send()
        if let index = arguments.firstIndex(of: "--topic") { arguments[index + 1] = topic }
        let result = try Tool.run(arguments)
        #expect(result.status == 4, "exit \(result.status): \(result.stderr)")
        #expect(try accepted().total == 0)
        return (arguments, result)
    }

    /// Starts the tool without waiting for it.
    func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.binary)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Starts the campaign's send at 800 requests a second and kills it with -9 once 30 KB of results are written.
    func sendKilledMidRun() throws {
        let killed = try start(send(["--rate", "800"]))
        waitForResults(bytes: 30_000, while: killed)
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
    }

    /// Waits until the result file holds `bytes` or the process ends.
    func waitForResults(bytes: Int, while process: Process) {
        let deadline = Date().addingTimeInterval(60 * Tool.timeScale)
        while Date() < deadline, process.isRunning {
            let size = (try? FileManager.default.attributesOfItem(atPath: results)[.size] as? Int) ?? 0
            if size >= bytes { return }
            usleep(5_000)
        }
    }

    /// The mock's accepted notifications: in all, and per token.
    func accepted() throws -> (total: Int, perToken: [String: Int]) {
        try Self.accepted(inLog: acceptedLog)
    }

    /// The notifications a mock's `--log-accepted` file lists: in all, and per token.
    static func accepted(inLog path: String) throws -> (total: Int, perToken: [String: Int]) {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var perToken: [String: Int] = [:]
        var total = 0
        for line in text.split(separator: "\n") {
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let token = object["token"] as? String
            else { continue }
            perToken[token, default: 0] += 1
            total += 1
        }
        return (total, perToken)
    }

    func expectNothingAcceptedTwice(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let twice = try accepted().perToken.filter { $0.value > 1 }
        #expect(twice.isEmpty, "accepted more than once: \(twice.prefix(5))", sourceLocation: sourceLocation)
    }

    func expectOneFinalLineEach(total: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var perLine: [Int: Int] = [:]
        for line in try Results.read(results) { perLine[line["line"] as? Int ?? 0, default: 0] += 1 }
        #expect(
            perLine.count == total, "\(perLine.count) of \(total) records have a line", sourceLocation: sourceLocation)
        #expect(perLine.values.allSatisfy { $0 == 1 }, "records with two final lines", sourceLocation: sourceLocation)
    }
}
