import Foundation
import Testing

/// Sending the records fixed after a run that ended "some records are invalid" (status 2), the way the tool says
/// to: the same command is refused (the input changed) and prints the command that sends only the records the
/// earlier result file has no delivered, in-doubt or prune line for (`--skip-delivered`). Audited against the
/// mock's `--log-accepted`: nothing accepted twice; `--overwrite`, the old way, sends the delivered ones again.
@Suite("sending fixed records end to end", .serialized)
struct FixedRecordsEndToEndTests {
    /// The sample campaign (17 records: 8 delivered, 3 pruned, 5 invalid, 1 duplicate) sent once; returns the run and
    /// the lines of the invalid records.
    static func sampleSent() throws -> (run: AuditedCampaign, invalid: [Int]) {
        let run = try AuditedCampaign(records: 0)
        try FileManager.default.removeItem(atPath: run.campaign)
        try FileManager.default.copyItem(atPath: Tool.path("samples/campaign.ndjson"), toPath: run.campaign)
        let first = try Tool.run(run.send())
        #expect(first.status == 2, "exit \(first.status): \(first.stderr)")
        #expect(try run.accepted().total == 8)
        let invalid = try Results.read(run.results).filter { $0["outcome"] as? String == "input_error" }
            .compactMap { $0["line"] as? Int }.sorted()
        #expect(invalid == [11, 12, 13, 15, 16], "\(invalid)")
        return (run, invalid)
    }

    /// Rewrites the campaign's invalid lines as valid records, each with a token of its own.
    static func fix(_ lines: [Int], in run: AuditedCampaign) throws {
        var text = try String(contentsOfFile: run.campaign, encoding: .utf8).components(separatedBy: "\n")
        for line in lines {
            let token = String(repeating: String(format: "%02x", 0xA0 + line), count: 32)
            text[line - 1] = #"{"token":"\#(token)","payload":{"aps":{"alert":"fixed line \#(line)"}}}"#
        }
        try text.joined(separator: "\n").write(toFile: run.campaign, atomically: true, encoding: .utf8)
    }

    /// The token of a fixed line, as the mock logs it.
    static func fixedToken(_ line: Int) -> String { String(repeating: String(format: "%02x", 0xA0 + line), count: 32) }

    @Test(
        "after fixing invalid records, the command the refusal prints sends only them; the same command again sends nothing"
    )
    func fixedRecordsSentOnce() throws {
        let (run, invalid) = try Self.sampleSent()
        try Self.fix(invalid, in: run)

        let refused = try Tool.run(run.send())
        #expect(refused.status == 64, "exit \(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains("--overwrite sends every record again"), "\(refused.stderr)")
        #expect(try run.accepted().total == 8, "the refused run sent something")
        let printed = try #require(refused.stderr.range(of: "): apns-bulk send "), "no command: \(refused.stderr)")
        let command = String(refused.stderr[refused.stderr.index(printed.lowerBound, offsetBy: 3)...])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            command.contains("--results '\(run.directory.file("results-2.ndjson"))'")
                || command.contains("--results \(run.directory.file("results-2.ndjson"))"), "\(command)")
        #expect(command.contains("--skip-delivered"))
        // The printed command, as a person pastes it into a shell.
        let path = "PATH='\((Tool.binary as NSString).deletingLastPathComponent)':$PATH; "
        let fixed = try RunFilesEndToEndTests.shell(path + command.trimmingCharacters(in: .whitespaces))
        #expect(fixed.status == 0, "exit \(fixed.status): \(fixed.stderr)")

        let accepted = try run.accepted()
        #expect(accepted.total == 8 + invalid.count, "\(accepted.total) accepted")
        try run.expectNothingAcceptedTwice()
        for line in invalid {
            #expect(accepted.perToken[Self.fixedToken(line)] == 1, "fixed line \(line) not delivered")
        }
        let lines = try Results.read(run.directory.file("results-2.ndjson"))
        #expect(lines.count == 17)
        let outcomes = Results.outcomes(lines)
        for line in invalid { #expect(outcomes[line] == "delivered", "line \(line): \(outcomes[line] ?? "none")") }
        let skipped = lines.filter { ($0["detail"] as? String)?.contains("--skip-delivered") == true }
        #expect(skipped.count == 12, "\(skipped.count) skipped")  // 8 delivered, 3 pruned, and line 14's copy of line 1
        #expect(skipped.allSatisfy { $0["outcome"] as? String == "duplicate" })
        #expect(skipped.contains { ($0["detail"] as? String)?.contains("before: \(run.results) line ") == true })

        // The same command again: finished, nothing sent, the same status.
        let again = try RunFilesEndToEndTests.shell(path + command.trimmingCharacters(in: .whitespaces))
        #expect(again.status == 0, "exit \(again.status): \(again.stderr)")
        #expect(again.stderr.contains("nothing sent"), "\(again.stderr)")
        #expect(try run.accepted().total == accepted.total, "the same command sent again")
    }

    @Test("--overwrite, the other way the refusal names, sends every record again: the delivered ones twice")
    func overwriteSendsEverythingAgain() throws {
        let (run, invalid) = try Self.sampleSent()
        try Self.fix(invalid, in: run)
        let help = try Tool.run(["send", "--help"])
        #expect(
            help.stdout.replacingOccurrences(of: "\n", with: " ").contains("every record is sent again"),
            "\(help.stdout)")

        let overwritten = try Tool.run(run.send(["--overwrite"]))
        #expect(overwritten.status == 0, "exit \(overwritten.status): \(overwritten.stderr)")
        let twice = try run.accepted().perToken.filter { $0.value > 1 }
        #expect(twice.count == 8, "\(twice.count) tokens accepted twice")
    }

    @Test(
        "--skip-delivered naming the --results file itself is a usage error; an unreadable one fails before anything is sent"
    )
    func skipDeliveredMistakes() throws {
        let (run, _) = try Self.sampleSent()
        let same = try Tool.run(run.send(["--skip-delivered", run.results]))
        #expect(same.status == 64, "exit \(same.status): \(same.stderr)")
        let other = run.directory.file("other.ndjson")
        let missing = try Tool.run(
            ["send", run.campaign, "--results", other, "--skip-delivered", run.directory.file("nope.ndjson")]
                + run.mock.clientArguments)
        #expect(missing.status == 1, "exit \(missing.status): \(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other), "a failed start left a result file")
        #expect(try run.accepted().total == 8)
    }

    @Test("--skip-delivered naming an unfinished run's result file is refused: its records in flight have no line yet")
    func skipDeliveredUnfinished() throws {
        let run = try AuditedCampaign(records: 4000, latency: "1..3ms")
        try run.sendKilledMidRun()
        let other = run.directory.file("other.ndjson")
        let refused = try Tool.run(
            ["send", run.campaign, "--results", other, "--skip-delivered", run.results]
                + run.mock.clientArguments)
        #expect(refused.status == 1, "exit \(refused.status): \(refused.stderr)")
        #expect(
            refused.stderr.contains("unfinished") && refused.stderr.contains("finish it first"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other), "a failed start left a result file")
        // Its own command finishes it; then the file can be named.
        let finished = try Tool.run(run.send())
        #expect(finished.status == 0 || finished.status == 3, "exit \(finished.status): \(finished.stderr)")
        let accepted = try run.accepted().total
        let skipping = try Tool.run(
            ["send", run.campaign, "--results", other, "--skip-delivered", run.results]
                + run.mock.clientArguments)
        #expect(skipping.status == 0, "exit \(skipping.status): \(skipping.stderr)")
        #expect(try run.accepted().total == accepted, "a record with a delivered or in-doubt line was sent again")
        try run.expectNothingAcceptedTwice()
    }
}
