import Foundation
import Testing

/// A campaign read from standard input, stopped mid-run and continued with another file on standard input: the
/// run is refused before any request (the records read again are not the ones answered), nothing is sent and the
/// result file stays as it was; the first stream again continues and finishes. Audited against the mock's
/// `--log-accepted`: nothing accepted twice.
@Suite("a continued stream is the same stream, end to end", .serialized)
struct ContinuedStreamEndToEndTests {
    /// `send - --results RESULTS < input` against the run's mock, through a shell.
    static func sendFromStandardInput(_ run: AuditedCampaign, _ input: String, _ extra: [String] = []) throws
        -> Tool.Result
    {
        let command =
            (["\"$0\"", "send", "-", "--results", "\"$2\""] + (extra + run.mock.clientArguments).map { "'\($0)'" }
            + ["< \"$1\""]).joined(separator: " ")
        return try Tool.run(["-c", command, Tool.binary, input, run.results], program: "/bin/bash")
    }

    /// Starts `send -` from `input` at 800 requests a second and stops it with `signal` once 30 KB of results
    /// are written.
    static func stopMidRun(_ run: AuditedCampaign, _ input: String, signal: Int32) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.binary)
        process.arguments = ["send", "-", "--results", run.results, "--rate", "800"] + run.mock.clientArguments
        process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        run.waitForResults(bytes: 30_000, while: process)
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    @Test(
        "send - < A stopped (kill -9, SIGTERM), then send - < B: refused before any request, nothing written; send - < A finishes it",
        arguments: [SIGKILL, SIGTERM])
    func anotherStreamRefused(signal: Int32) throws {
        let run = try AuditedCampaign(records: 4000, latency: "1..3ms")
        // B: the same records in another order (a re-export); C: the same tokens in the same order, other payloads.
        let other = run.directory.file("b.ndjson")
        try SendEndToEndTests.shell("tac '\(run.campaign)' > '\(other)'")
        let payloads = run.directory.file("c.ndjson.changed")
        try SendEndToEndTests.shell("sed 's/Record /Entry /' '\(run.campaign)' > '\(payloads)'")
        try Self.stopMidRun(run, run.campaign, signal: signal)
        let answered = try Results.completeLines(run.results)
        #expect(answered > 0 && answered < 4000, "\(answered) answered: not stopped mid-run")
        let before = try Data(contentsOf: URL(fileURLWithPath: run.results))
        let journal = run.results + ".journal"
        let journalBefore = try Data(contentsOf: URL(fileURLWithPath: journal))
        let acceptedBefore = try run.accepted().total

        for (input, what) in [(other, "another token"), (payloads, "another notification")] {
            let refused = try Self.sendFromStandardInput(run, input)
            #expect(refused.status == 64, "exit \(refused.status): \(refused.stderr)")
            #expect(
                refused.stderr.contains("standard input is not the stream") && refused.stderr.contains("line 1 "),
                "\(refused.stderr)")
            #expect(refused.stderr.contains(what), "\(refused.stderr)")
            #expect(!refused.stderr.contains("continuing"), "\(refused.stderr)")
            #expect(try run.accepted().total == acceptedBefore, "a refused run sent something")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: run.results)) == before,
                "a refused run touched the result file")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: journal)) == journalBefore,
                "a refused run touched the journal")
        }

        let finished = try Self.sendFromStandardInput(run, run.campaign)
        #expect(finished.status == 0 || finished.status == 3, "exit \(finished.status): \(finished.stderr)")
        #expect(finished.stderr.contains("continuing"), "\(finished.stderr)")
        try run.expectOneFinalLineEach(total: 4000)
        try run.expectNothingAcceptedTwice()
        let lines = try Results.read(run.results)
        let delivered = lines.filter { $0["outcome"] as? String == "delivered" }.count
        // sent when killed: perhaps accepted
        let inDoubt = lines.filter { $0["outcome"] as? String == "in_doubt" }.count
        let accepted = try run.accepted().total
        #expect(
            accepted >= delivered && accepted <= delivered + inDoubt, "\(accepted) accepted, \(delivered) delivered")
    }
}
