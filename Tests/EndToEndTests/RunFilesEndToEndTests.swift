import Foundation
import Testing

/// The run's own files end to end: one run at a time per result file, campaign-wide status after resumes,
/// start-up failures that leave nothing behind, a full disk, and file permissions.
@Suite("run files end to end", .serialized)
struct RunFilesEndToEndTests {
    @Test("a second run on the same result file is refused at once, naming the first run's pid; kill -9 frees it")
    func secondRunRefused() throws {
        let run = try InterruptedSend(records: 4000, rate: 400, latency: "1..3ms", waitForBytes: 2_000)
        #expect(run.send.isRunning, "the first run ended before the second started")
        let pid = "\(run.send.processIdentifier)"
        let started = Date()
        let resume = try Tool.run(
            ["send", run.campaign, "--results", run.results, "--resume"] + run.mock.clientArguments,
            timeout: 30)
        #expect(resume.status == 1, "exit \(resume.status): \(resume.stderr)")
        #expect(resume.stderr.contains("pid \(pid)"), "\(resume.stderr)")
        #expect(Date().timeIntervalSince(started) < 10, "the refusal took too long")
        let fresh = try Tool.run(
            ["send", run.campaign, "--results", run.results] + run.mock.clientArguments, timeout: 30)
        #expect(fresh.status == 1, "exit \(fresh.status): \(fresh.stderr)")
        #expect(fresh.stderr.contains("pid \(pid)"), "\(fresh.stderr)")
        kill(run.send.processIdentifier, SIGKILL)
        run.send.waitUntilExit()
        let after = try Tool.run(
            ["send", run.campaign, "--results", run.results, "--resume"] + run.mock.clientArguments)
        #expect(
            after.status == 0 || after.status == 3, "the lock outlived its run: exit \(after.status): \(after.stderr)")
        let counters = try run.mock.stop()
        let lines = try Results.read(run.results)
        #expect((counters["requests"] as? Int ?? 0) <= 4000, "a record was sent twice")
        var perLine: [Int: Int] = [:]
        for line in lines { perLine[line["line"] as? Int ?? 0, default: 0] += 1 }
        #expect(perLine.count == 4000, "records without a final line")
        #expect(perLine.values.allSatisfy { $0 == 1 }, "records with two final lines")
    }

    @Test("kill -9, a resume stopped by SIGTERM, then a final resume: exit 3 and a summary of the whole campaign")
    func campaignStatusAfterResumes() throws {
        let total = 6000
        let run = try InterruptedSend(records: total, rate: 2000, latency: "40..80ms", waitForBytes: 60_000)
        kill(run.send.processIdentifier, SIGKILL)
        run.send.waitUntilExit()
        let killedAt = try Results.completeLines(run.results)
        #expect(killedAt < total, "the send finished before it could be killed")

        // First resume, stopped by SIGTERM once it has written a few more lines.
        let resume = Process()
        resume.executableURL = URL(fileURLWithPath: Tool.binary)
        resume.arguments =
            ["send", run.campaign, "--results", run.results, "--resume", "--rate", "1000"] + run.mock.clientArguments
        resume.standardError = FileHandle.nullDevice
        try resume.run()
        let base = (try? FileManager.default.attributesOfItem(atPath: run.results)[.size] as? Int) ?? 0
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, resume.isRunning {
            let size = (try? FileManager.default.attributesOfItem(atPath: run.results)[.size] as? Int) ?? 0
            if size >= base + 60_000 { break }
            usleep(10_000)
        }
        kill(resume.processIdentifier, SIGTERM)
        resume.waitUntilExit()
        #expect(resume.terminationStatus == 5, "exit \(resume.terminationStatus)")

        let summaryPath = run.directory.file("summary.json")
        let metricsPath = run.directory.file("metrics.prom")
        let last = try Tool.run(
            [
                "send", run.campaign, "--results", run.results, "--resume", "--summary", summaryPath,
                "--metrics", metricsPath,
            ] + run.mock.clientArguments)
        _ = try run.mock.stop()
        let lines = try Results.read(run.results)
        let inDoubt = lines.filter { $0["outcome"] as? String == "in_doubt" }
        #expect(lines.count == total)
        #expect(!inDoubt.isEmpty, "kill -9 with requests in flight left nothing in doubt")
        #expect(last.status == 3, "exit \(last.status): \(last.stderr)")
        #expect(inDoubt.allSatisfy { ($0["attempts"] as? Int ?? 0) >= 1 }, "in-doubt lines without their attempts")
        let summary =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: summaryPath)))
            as? [String: Any]
        #expect((summary?["outcomes"] as? [String: Int])?["in_doubt"] == inDoubt.count, "\(summary ?? [:])")
        #expect(summary?["records"] as? Int == total)
        let thisRun = summary?["this_run"] as? [String: Any]
        #expect((thisRun?["outcomes"] as? [String: Int])?["in_doubt"] == 0, "\(thisRun ?? [:])")
        #expect((thisRun?["records"] as? Int ?? total) < total)
        let metrics = (try? String(contentsOfFile: metricsPath, encoding: .utf8)) ?? ""
        #expect(
            metrics.contains(
                "apns_bulk_records_total{campaign=\"results\",shard=\"all\",outcome=\"in_doubt\"} \(inDoubt.count)\n"),
            "\(metrics)")
        #expect(last.stderr.contains("in_doubt \(inDoubt.count)"), "\(last.stderr)")
    }

    @Test(
        "a missing --ca-file, a wrong PKCS#12 password, a certificate/key mismatch or a missing input leave no result file or journal; the corrected command just runs"
    )
    func startUpFailureLeavesNothing() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let results = out.file("results.ndjson")
        var arguments = mock.clientArguments
        if let index = arguments.firstIndex(of: "--ca-file") { arguments[index + 1] = out.file("missing-ca.pem") }
        let failed = try Tool.run(["send", Tool.path("samples/campaign.ndjson"), "--results", results] + arguments)
        #expect(failed.status == 1, "exit \(failed.status): \(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: results), "a result file was created")
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"), "a journal was created")
        let certificateRun = [
            "send", Tool.path("samples/campaign.ndjson"), "--results", results, "--endpoint",
            "https://127.0.0.1:\(mock.port)", "--ca-file", mock.caFile, "--topic", MockProcess.topic,
        ]
        let wrongPassword = try Tool.run(
            certificateRun + ["--p12", Tool.path("Tests/Fixtures/tls/client.p12")],
            environment: ["APNS_P12_PASSWORD": "not-the-password"])
        #expect(wrongPassword.status == 1, "exit \(wrongPassword.status): \(wrongPassword.stderr)")
        let mismatch = try Tool.run(
            certificateRun + [
                "--cert", Tool.path("Tests/Fixtures/tls/client.pem"),
                "--cert-key", Tool.path("Tests/Fixtures/tls/other-ca.key"),
            ])
        #expect(mismatch.status == 1, "exit \(mismatch.status): \(mismatch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: results), "a result file was created")
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"), "a journal was created")
        let missingInput = try Tool.run(["send", out.file("nope.ndjson"), "--results", results] + mock.clientArguments)
        #expect(missingInput.status == 1, "exit \(missingInput.status): \(missingInput.stderr)")
        #expect(!FileManager.default.fileExists(atPath: results + ".journal"), "a journal was created")
        let fixed = try Tool.run(
            ["send", Tool.path("samples/campaign.ndjson"), "--results", results] + mock.clientArguments)
        #expect(fixed.status == 2, "exit \(fixed.status): \(fixed.stderr)")
        #expect(try Results.read(results).count == 17)
        _ = try mock.stop()
    }

    @Test(
        "an empty journal with no result lines is no run at all; an unfinished run without a campaign record asks for --resume"
    )
    func emptyJournalIsNoRun() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let results = out.file("results.ndjson")
        _ = FileManager.default.createFile(atPath: results, contents: nil)
        _ = FileManager.default.createFile(atPath: results + ".journal", contents: nil)
        let run = try Tool.run(
            ["send", Tool.path("samples/campaign.ndjson"), "--results", results] + mock.clientArguments)
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        // A journal beside results without a campaign record (an older apns-bulk's unfinished run).
        _ = FileManager.default.createFile(atPath: results + ".journal", contents: Data("s 0 1\n".utf8))
        try FileManager.default.removeItem(atPath: results + ".campaign")
        let refused = try Tool.run(
            ["send", Tool.path("samples/campaign.ndjson"), "--results", results] + mock.clientArguments)
        #expect(refused.status == 1, "exit \(refused.status): \(refused.stderr)")
        #expect(
            refused.stderr.contains("--resume") && !refused.stderr.contains("input files invalid"), "\(refused.stderr)")
        _ = try mock.stop()
    }

    /// Under ThreadSanitizer its runtime dies of SIGBUS at start-up in a process with a small RLIMIT_FSIZE, before
    /// any of our code runs: the test runs in the plain and AddressSanitizer passes of the test command only.
    @Test(
        "a full disk ends the run with exit 1 and a summary; --resume then finishes, nothing sent twice",
        .disabled(
            if: ProcessInfo.processInfo.environment["APNS_BULK_SANITIZER"] == "thread",
            "ThreadSanitizer's runtime cannot start under a small file-size limit"))
    func diskFullThenResume() throws {
        let total = 3000
        let out = try TemporaryDirectory()
        let campaign = out.file("c.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records \(total) --out '\(campaign)'")
        let mock = try MockProcess(["--fault", "latency=1..3ms"])
        let results = out.file("results.ndjson")
        let quoted =
            (["send", campaign, "--results", results, "--summary", out.file("summary.json")] + mock.clientArguments)
            .map { "'\($0)'" }.joined(separator: " ")
        // 200 KiB per file: the result file fills up after several hundred records.
        let full = try Self.shell("ulimit -f 200; exec '\(Tool.binary)' \(quoted)")
        #expect(full.status == 1, "exit \(full.status): \(full.stderr)")
        #expect(full.stderr.contains("outcomes:"), "no final summary: \(full.stderr)")
        #expect(full.stderr.contains("write failed"), "\(full.stderr)")
        let partial = try Results.read(results).count
        #expect(partial > 0 && partial < total, "\(partial) lines")
        for path in [results, results + ".journal", out.file("summary.json")] {
            let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
            #expect(mode & 0o077 == 0, "\(path) is readable by others: \(String(mode, radix: 8))")
        }

        let resume = try Tool.run(["send", campaign, "--results", results, "--resume"] + mock.clientArguments)
        #expect(resume.status == 0 || resume.status == 3, "exit \(resume.status): \(resume.stderr)")
        let counters = try mock.stop()
        let lines = try Results.read(results)
        var perLine: [Int: Int] = [:]
        for line in lines { perLine[line["line"] as? Int ?? 0, default: 0] += 1 }
        #expect(perLine.count == total, "records without a final line")
        #expect(perLine.values.allSatisfy { $0 == 1 }, "records with two final lines")
        #expect((counters["requests"] as? Int ?? 0) <= total, "a record was sent twice")
        let ok = (counters["by_status"] as? [String: Int])?["200"] ?? 0
        let delivered = lines.filter { $0["outcome"] as? String == "delivered" }.count
        let inDoubt = lines.filter { $0["outcome"] as? String == "in_doubt" }.count
        #expect(
            ok >= delivered && ok <= delivered + inDoubt, "mock 200s \(ok), delivered \(delivered), in doubt \(inDoubt)"
        )
    }

    @Test("the result path is not followed through a planted symlink")
    func symlinkRefused() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let victim = out.file("victim.txt")
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: victim))
        let results = out.file("results.ndjson")
        try FileManager.default.createSymbolicLink(atPath: results, withDestinationPath: victim)
        let run = try Tool.run(
            ["send", Tool.path("samples/campaign.ndjson"), "--results", results] + mock.clientArguments)
        #expect(run.status == 1, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("symbolic link"), "\(run.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me\n")
        _ = try mock.stop()
    }

    /// A port of 127.0.0.1 nothing listens on (bound once by the kernel's choice, then released): a connection
    /// to it is refused.
    static func closedPort(in directory: TemporaryDirectory) throws -> String {
        let file = directory.file("closed-port")
        let found = try shell(
            "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); print(s.getsockname()[1])' > '\(file)'"
        )
        try #require(found.status == 0, "\(found.stderr)")
        return try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a `/bin/sh` script to completion and collects its output.
    static func shell(_ script: String, timeout: Double = 120) throws -> Tool.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        let directory = try TemporaryDirectory()
        let err = directory.file("stderr")
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return Tool.Result(
            status: process.terminationStatus, stdout: "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}
