import Foundation
import Testing

/// Time is judged while the process runs: a `send` stopped with SIGSTOP mid-run (a frozen container, a paused VM)
/// reports every notification the server answered by its answer once continued. Audited against the mock's
/// `--log-accepted`: every accepted request delivered, none in doubt, nothing accepted twice. (Wall-clock steps
/// are tested on the provider-token cache with driven clocks: libfaketime's preload hides the arguments from the
/// Swift executable, so `faketime apns-bulk send …` cannot run.)
///
/// The pause must outlast the stall timeout (5 s): the test waits that long, so it runs in the plain pass of the
/// test command only.
@Suite(
    "a paused process, end to end", .serialized,
    .disabled(
        if: ProcessInfo.processInfo.environment["APNS_BULK_SANITIZER"] != nil,
        "waits out a pause longer than the stall timeout; the plain pass runs it"))
struct PauseEndToEndTests {
    /// Starts `arguments` (the tool), its standard error to `stderr`.
    static func start(_ arguments: [String], stderr: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Tool.binary)
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: stderr, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderr))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits for `process` to end, at most `seconds`; kills it after that.
    static func wait(_ process: Process, seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            Issue.record("send did not finish within \(seconds) s")
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// Every record answered by the mock is `delivered`, none in doubt or lost, one line each; nothing twice.
    static func expectEveryAcceptedDelivered(
        _ run: AuditedCampaign, total: Int, status: Int32, stderr: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let log = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
        let outcomes = Results.outcomes(try Results.read(run.results))
        var counts: [String: Int] = [:]
        for outcome in outcomes.values { counts[outcome, default: 0] += 1 }
        #expect(status == 0, "exit \(status), outcomes \(counts): \(log.suffix(600))", sourceLocation: sourceLocation)
        #expect(counts["delivered"] == total, "outcomes \(counts)", sourceLocation: sourceLocation)
        #expect(counts["in_doubt", default: 0] == 0, "outcomes \(counts)", sourceLocation: sourceLocation)
        #expect(try run.accepted().total == total, sourceLocation: sourceLocation)
        try run.expectNothingAcceptedTwice(sourceLocation: sourceLocation)
        try run.expectOneFinalLineEach(total: total, sourceLocation: sourceLocation)
    }

    @Test(
        "SIGSTOP for 6 s mid-run (longer than the 5 s stall timeout), then SIGCONT: every request the mock accepted is delivered, exit 0"
    )
    func stoppedAndContinued() throws {
        let total = 3000
        let run = try AuditedCampaign(records: total, latency: "200ms")
        let stderr = run.directory.file("send.log")
        let send = try Self.start(run.send(["--rate", "1000"]), stderr: stderr)
        run.waitForResults(bytes: 40_000, while: send)  // a few hundred answered, about 200 requests in flight
        #expect(send.isRunning, "the run ended before the pause")
        kill(send.processIdentifier, SIGSTOP)
        usleep(6_000_000)
        let acceptedDuringPause = try run.accepted().total
        kill(send.processIdentifier, SIGCONT)
        Self.wait(send, seconds: 60)
        #expect(acceptedDuringPause < total, "the pause came after the last request")
        try Self.expectEveryAcceptedDelivered(run, total: total, status: send.terminationStatus, stderr: stderr)
        _ = try run.mock.stop()
    }
}
