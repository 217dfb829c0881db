import Foundation
import Testing

/// Files are safe, and `validate` and `send` agree: a result file that names an input, or a file that is not a
/// result file, is refused with `--overwrite` or without; every output is checked before the first request;
/// `--results -` leaves nothing in the working directory and ends cleanly when its reader goes away; a campaign
/// with no topic anywhere is refused whatever its first lines hold, by `send` and `validate` alike. Every test
/// audits the mock's `--log-accepted`.
@Suite("file safety end to end", .serialized)
struct FileSafetyEndToEndTests {
    @Test("--results naming an input (by any path) or a file that is not a result file is refused, --overwrite or not")
    func resultsNeverAnInput() throws {
        let run = try AuditedCampaign(records: 50)
        let campaign = try Data(contentsOf: URL(fileURLWithPath: run.campaign))
        let hardLink = run.directory.file("same-campaign.ndjson")
        #expect(link(run.campaign, hardLink) == 0)
        let notes = run.directory.file("notes.txt")
        try "my notes\n".write(toFile: notes, atomically: true, encoding: .utf8)
        for results in [run.campaign, hardLink, notes] {
            for extra in [[], ["--overwrite"]] {
                let sent = try Tool.run(
                    ["send", run.campaign, "--results", results] + extra + run.mock.clientArguments)
                #expect(sent.status == 64, "\(results) \(extra): exit \(sent.status): \(sent.stderr)")
                #expect(sent.stderr.contains("--results \(results):"), "\(sent.stderr)")
                #expect(!sent.stderr.contains("--overwrite"), "suggests the flag that destroys it: \(sent.stderr)")
                #expect(sent.stderr.split(separator: "\n").count == 1, "\(sent.stderr)")
            }
            let validated = try Tool.run(["validate", run.campaign, "--results", results, "--topic", MockProcess.topic])
            #expect(validated.status == 64, "validate \(results): exit \(validated.status): \(validated.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: run.campaign)) == campaign, "the campaign was written over")
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
        let left = try FileManager.default.contentsOfDirectory(atPath: run.directory.path).sorted()
        #expect(left == ["accepted.ndjson", "c.ndjson", "notes.txt", "same-campaign.ndjson"], "\(left)")
        #expect(try run.accepted().total == 0)

        // replay: the result file it replays, by another name, is refused too; the original stays as it was.
        #expect(try Tool.run(run.send()).status == 0)
        let results = try Data(contentsOf: URL(fileURLWithPath: run.results))
        let other = run.directory.file("again.ndjson")
        #expect(link(run.results, other) == 0)
        let replay = try Tool.run(
            ["replay", run.results, "--results", other, "--overwrite"] + run.mock.replayArguments)
        #expect(replay.status == 64, "exit \(replay.status): \(replay.stderr)")
        #expect(replay.stderr.contains("--results \(other): it is the input \(run.results)"), "\(replay.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: run.results)) == results)
        // validate, which writes its file anew, never replaces a campaign's result file.
        let validated = try Tool.run(["validate", run.campaign, "--results", run.results, "--topic", MockProcess.topic])
        #expect(validated.status == 64, "exit \(validated.status): \(validated.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: run.results)) == results)

        // prune and report: their outputs are never the result files they read, and a missing folder is named.
        let prune = try Tool.run(["prune", run.results, "--output", other])
        #expect(prune.status == 64, "exit \(prune.status): \(prune.stderr)")
        #expect(prune.stderr.contains("--output \(other): it is the input \(run.results)"), "\(prune.stderr)")
        let page = run.directory.file("missing/report.html")
        let report = try Tool.run(["report", run.results, "--html", page])
        #expect(report.status == 1, "exit \(report.status): \(report.stderr)")
        #expect(report.stderr.contains("--html \(page): the folder"), "\(report.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: run.results)) == results)
        try run.expectNothingAcceptedTwice()
    }

    @Test(
        "--summary, --report and --metrics in a missing folder: refused before the first request, naming the path; fixed, the same command sends once"
    )
    func outputsCheckedFirst() throws {
        let run = try AuditedCampaign(records: 40)
        let missing = run.directory.file("missing")
        for option in ["--summary", "--report", "--metrics"] {
            let path = missing + "/out"
            let refused = try Tool.run(run.send([option, path]))
            #expect(refused.status == 1, "\(option): exit \(refused.status): \(refused.stderr)")
            #expect(
                refused.stderr.contains("\(option) \(path): the folder \(missing) does not exist"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: run.results), "\(option): a result file was created")
        }
        let directory = try Tool.run(run.send(["--summary", run.directory.path]))
        #expect(directory.status == 64, "exit \(directory.status): \(directory.stderr)")
        #expect(directory.stderr.contains("--summary \(run.directory.path): is a directory"), "\(directory.stderr)")
        let same = try Tool.run(
            run.send(["--summary", run.directory.file("s.json"), "--report", run.directory.file("s.json")]))
        #expect(same.status == 64, "exit \(same.status): \(same.stderr)")
        let campaign = try Data(contentsOf: URL(fileURLWithPath: run.campaign))
        let input = try Tool.run(run.send(["--metrics", run.campaign]))
        #expect(
            input.status == 64 && input.stderr.contains("--metrics \(run.campaign): it is the input"), "\(input.stderr)"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: run.campaign)) == campaign)
        let key = run.directory.file("key.p8")
        try FileManager.default.copyItem(atPath: MockProcess.keyFile, toPath: key)
        let withKey = run.send(["--summary", key]).map { $0 == MockProcess.keyFile ? key : $0 }
        let onKey = try Tool.run(withKey)
        #expect(onKey.status == 64 && onKey.stderr.contains("--summary \(key): it is the input"), "\(onKey.stderr)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: key))
                == Data(contentsOf: URL(fileURLWithPath: MockProcess.keyFile)))
        #expect(try run.accepted().total == 0, "a refused run sent something")

        try FileManager.default.createDirectory(atPath: missing, withIntermediateDirectories: true)
        let summary = missing + "/summary.json"
        let fixed = try Tool.run(
            run.send(["--summary", summary, "--report", missing + "/r.html", "--metrics", missing + "/m.prom"]))
        #expect(fixed.status == 0, "exit \(fixed.status): \(fixed.stderr)")
        #expect(try run.accepted().total == 40)
        let json =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summary))) as? [String: Any]
        #expect("\(json ?? [:])".contains("40"), "\(json ?? [:])")
        try run.expectNothingAcceptedTwice()
    }

    @Test("send --results - | head -1, with and without 2>&1: no trap, no file in the working directory")
    func standardOutputClosed() throws {
        let run = try AuditedCampaign(records: 3000)
        let cwd = try TemporaryDirectory()
        let arguments = run.mock.clientArguments.map { "'\($0)'" }.joined(separator: " ")
        for redirect in ["", "2>&1"] {
            for round in 1...3 {
                let script =
                    "\"$0\" send '\(run.campaign)' --results - \(arguments) \(redirect) | head -1 "
                    + ">/dev/null; echo \"${PIPESTATUS[0]}\" > status"
                let before = try run.accepted().total
                let shell = try Tool.run(["-c", script, Tool.binary], program: "/bin/bash", directory: cwd.path)
                let status =
                    Int32(
                        (try String(contentsOfFile: cwd.file("status"), encoding: .utf8))
                            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
                // 600 KB of result lines fill the pipe long before the end: the write fails, the run stops.
                #expect(status == 4, "\(redirect) round \(round): exit \(status) (\(shell.stderr))")
                #expect(
                    try run.accepted().total - before < 3000,
                    "\(redirect) round \(round): sent on after the pipe closed")
                if redirect.isEmpty {
                    #expect(shell.stderr.contains("STOPPED EARLY: write failed: -: Broken pipe"), "\(shell.stderr)")
                }
                try FileManager.default.removeItem(atPath: cwd.file("status"))
                let left = try FileManager.default.contentsOfDirectory(atPath: cwd.path)
                #expect(left.isEmpty, "\(redirect) round \(round): left \(left)")
            }
        }
        let resumed = try Tool.run(["send", run.campaign, "--results", "-", "--resume"] + run.mock.clientArguments)
        #expect(resumed.status == 64, "exit \(resumed.status): \(resumed.stderr)")
    }

    @Test(
        "no topic anywhere: refused (64, one line) whatever the first lines hold, by send and validate alike; --topic then sends"
    )
    func noTopicWhateverComesFirst() throws {
        let run = try AuditedCampaign(records: 300)
        let records = try String(contentsOfFile: run.campaign, encoding: .utf8)
        let badToken = #"{"token":"xyz","payload":{"aps":{}}}"#
        try ("not json\n" + badToken + "\n" + records).write(toFile: run.campaign, atomically: true, encoding: .utf8)
        var send = run.send()
        let topic = send.firstIndex(of: "--topic")!
        send.removeSubrange(topic...(topic + 1))
        let noTopic = ["APNS_TOPIC": ""]

        let sent = try Tool.run(send, environment: noTopic)
        #expect(sent.status == 64, "exit \(sent.status): \(sent.stderr)")
        #expect(sent.stderr.contains("--topic") && sent.stderr.split(separator: "\n").count == 1, "\(sent.stderr)")
        #expect(!FileManager.default.fileExists(atPath: run.results), "a result file was created")
        let validated = try Tool.run(["validate", run.campaign], environment: noTopic)
        #expect(validated.status == 64, "exit \(validated.status): \(validated.stderr)")
        #expect(validated.stdout.isEmpty, "one line per record: \(validated.stdout.prefix(300))")
        #expect(validated.stderr == sent.stderr, "validate: \(validated.stderr)")

        // A stream: what was read ahead is all that is known of it, and it is enough here.
        let piped =
            "\"$0\" send - " + send.dropFirst(2).map { "'\($0)'" }.joined(separator: " ") + " < '\(run.campaign)'"
        let fromStream = try Tool.run(["-c", piped, Tool.binary], environment: noTopic, program: "/bin/bash")
        #expect(fromStream.status == 64, "exit \(fromStream.status): \(fromStream.stderr)")
        #expect(try run.accepted().total == 0, "a refused run sent something")

        // The fix the message names: --topic. Everything valid is sent once, the two bad lines are invalid.
        let fixed = try Tool.run(run.send())
        #expect(fixed.status == 2, "exit \(fixed.status): \(fixed.stderr)")
        #expect(try run.accepted().total == 300)

        // A topic in the file's last record only: not refused, the records without one are invalid.
        let late = run.directory.file("late.ndjson")
        let lastToken = String(repeating: "ab", count: 32)
        try (records + #"{"token":"\#(lastToken)","topic":"\#(MockProcess.topic)","payload":{"aps":{}}}"# + "\n")
            .write(toFile: late, atomically: true, encoding: .utf8)
        let lateRun = try Tool.run(
            ["send", late, "--results", run.directory.file("late-results.ndjson")]
                + send.dropFirst(4), environment: noTopic)
        #expect(lateRun.status == 2, "exit \(lateRun.status): \(lateRun.stderr)")
        #expect(try run.accepted().perToken[lastToken] == 1)
        try run.expectNothingAcceptedTwice()
    }

    @Test("validate and send agree: an empty campaign is 1 with one line for both")
    func emptyCampaignAgrees() throws {
        let directory = try TemporaryDirectory()
        let empty = directory.file("empty.ndjson")
        _ = FileManager.default.createFile(atPath: empty, contents: Data("\n".utf8))
        let validated = try Tool.run(["validate", empty, "--topic", MockProcess.topic])
        #expect(validated.status == 1, "exit \(validated.status): \(validated.stderr)")
        #expect(
            validated.stderr.contains("no records") && validated.stderr.split(separator: "\n").count == 1,
            "\(validated.stderr)")
        let mock = try MockProcess()
        let sent = try Tool.run(["send", empty, "--results", directory.file("r.ndjson")] + mock.clientArguments)
        #expect(sent.status == 1, "exit \(sent.status): \(sent.stderr)")
        #expect(sent.stderr == validated.stderr, "send: \(sent.stderr)")
    }
}
