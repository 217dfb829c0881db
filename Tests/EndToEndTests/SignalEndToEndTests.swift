import Foundation
import Testing

/// SIGINT and SIGTERM arriving while requests are in flight, with the built executable against a slow mock: the
/// signal reaches the run through its event loop, the first stops gracefully, a second one (during the grace
/// period the first one started) abandons what is in flight.
@Suite("signals mid-run end to end", .serialized)
struct SignalEndToEndTests {
    @Test("SIGTERM with requests in flight: exit 5, one line per record at most, nothing in doubt; --resume finishes")
    func terminateWhileInFlight() throws {
        let total = 3000
        let run = try InterruptedSend(records: total, rate: 2000, latency: "100..300ms", waitForBytes: 20_000)
        let signalledAt = Date()
        kill(run.send.processIdentifier, SIGTERM)
        run.send.waitUntilExit()
        #expect(run.send.terminationStatus == 5, "exit \(run.send.terminationStatus)")
        #expect(Date().timeIntervalSince(signalledAt) < 10 * Tool.timeScale, "the graceful stop took too long")
        let partial = try Results.read(run.results)
        #expect(partial.count > 0 && partial.count < total)
        let keys = partial.compactMap { $0["line"] as? Int }
        #expect(Set(keys).count == keys.count, "a record has two result lines")
        #expect(partial.allSatisfy { $0["outcome"] as? String == "delivered" }, "a graceful stop waits for answers")

        let resume = try Tool.run(
            ["send", run.campaign, "--results", run.results, "--resume"] + run.mock.clientArguments)
        #expect(resume.status == 0, "exit \(resume.status): \(resume.stderr)")
        let counters = try run.mock.stop()
        let lines = try Results.read(run.results)
        #expect(lines.count == total)
        #expect(Set(lines.compactMap { $0["line"] as? Int }).count == total)
        #expect(counters["requests"] as? Int == total, "a record was sent twice")
    }

    @Test("a second signal during the grace period: exit 5 at once, in doubt only what the mock received")
    func secondSignalDuringGracePeriod() throws {
        let run = try InterruptedSend(records: 2000, rate: 1000, latency: "4000..5000ms", waitForBytes: 0)
        let started = Date()
        // No line can be written before the first answer (4 s): wait until requests are surely in flight.
        while Date().timeIntervalSince(started) < 1.5 * Tool.timeScale, run.send.isRunning { usleep(20_000) }
        kill(run.send.processIdentifier, SIGTERM)
        usleep(300_000)  // the first signal's grace period (15 s) has begun
        let secondAt = Date()
        kill(run.send.processIdentifier, SIGINT)
        run.send.waitUntilExit()
        #expect(run.send.terminationStatus == 5, "exit \(run.send.terminationStatus)")
        #expect(Date().timeIntervalSince(secondAt) < 3 * Tool.timeScale, "the second signal did not cut the wait short")
        let counters = try run.mock.stop()
        let lines = try Results.read(run.results)
        let keys = lines.compactMap { $0["line"] as? Int }
        #expect(Set(keys).count == keys.count, "a record has two result lines")
        let inDoubt = lines.filter { $0["outcome"] as? String == "in_doubt" }.count
        let received = counters["requests"] as? Int ?? 0
        #expect(inDoubt > 0, "no request was in flight when the second signal came")
        #expect(inDoubt <= received, "\(inDoubt) in doubt but the mock received \(received): some never left")
        #expect(lines.allSatisfy { ["delivered", "in_doubt"].contains($0["outcome"] as? String ?? "") })
    }
}
