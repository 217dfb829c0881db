import APNSCore
import Testing

@testable import APNSPipeline

/// SIGINT/SIGTERM as the dispatcher hears them (`interrupt`, then `abortInFlight` for a second signal), arriving
/// while requests are in flight, in virtual time.
@Suite("Dispatcher signals mid-run")
struct DispatcherSignalTests {
    private struct Ended {
        var summary: CampaignSummary
        var at: Double
    }

    private func start(_ run: DispatchRun) -> () -> Ended? {
        var ended: Ended?
        run.dispatcher.start { summary, _ in ended = Ended(summary: summary, at: run.scheduler.now) }
        run.scheduler.run(limit: 1)  // the first pump: requests in flight, none answered
        return { ended }
    }

    @Test("an interrupt with requests in flight: their answers are awaited, nothing new is sent or read")
    func interruptWhileInFlight() throws {
        let run = DispatchRun(records: (1...20).map { Fixture.record($0, token: Fixture.token($0)) }) { _, _ in
            Fixture.ok()
        }
        run.transport.latency = 1
        let ended = start(run)
        #expect(run.transport.totalSends == 4)
        // One record read ahead waits for a slot (`DispatcherStateMachine.park`).
        #expect(run.source.pulled == 5)
        run.dispatcher.interrupt()
        run.scheduler.run()
        let end = try #require(ended())
        #expect(end.summary.ending == .interrupted)
        #expect(run.transport.totalSends == 4, "sent after the interrupt")
        #expect(run.sink.results.map(\.outcome) == Array(repeating: .delivered, count: 4))
        #expect(run.source.pulled == 5, "read after the interrupt")
    }

    @Test("a second signal during the grace period: what is in flight is in doubt at once, nothing else")
    func secondSignalDuringGracePeriod() throws {
        let run = DispatchRun(records: (1...20).map { Fixture.record($0, token: Fixture.token($0)) }) { _, _ in
            Fixture.ok()
        }
        run.transport.latency = 100  // longer than the grace period
        let ended = start(run)
        run.dispatcher.interrupt()
        run.dispatcher.abortInFlight()
        run.scheduler.run()
        let end = try #require(ended())
        #expect(end.summary.ending == .interrupted)
        #expect(end.at < DispatcherConfiguration().drainGracePeriod, "the second signal did not cut the wait short")
        #expect(run.sink.results.count == 4)
        #expect(run.sink.results.allSatisfy { $0.outcome == .inDoubt && $0.attempts == 1 })
        #expect(Set(run.sink.results.map(\.key)) == Set(run.sink.journaledSent), "in doubt but never journaled as sent")
    }

    @Test("an interrupt during an early stop changes nothing: the records left still get their not_sent lines")
    func interruptDuringEarlyStop() throws {
        let run = DispatchRun(records: (1...20).map { Fixture.record($0, token: Fixture.token($0)) }) { _, _ in
            Fixture.ok()
        }
        run.transport.latency = 1
        let ended = start(run)
        run.dispatcher.transportFailed(TransportStub.failure)
        run.dispatcher.interrupt()
        run.scheduler.run()
        let end = try #require(ended())
        #expect(end.summary.ending == .stoppedEarly("transport failed: pin mismatch"))
        #expect(run.sink.results.count == 20, "every record has its line after an early stop")
        #expect(end.summary.count(.delivered) == 4)
        #expect(end.summary.count(.notSent) == 16)
    }
}

private enum TransportStub {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "pin mismatch" }
    }

    static let failure = Failure()
}
