import APNSCore
import Testing
@testable import APNSPipeline

/// The dispatcher's events are queued and handled by one loop, never inside the transport's callback.
@Suite("Dispatcher event queue")
struct DispatcherEventQueueTests {
    @Test("a transport callback only queues its event: the answer's line is written on a later loop turn")
    func callbackOnlyQueues() throws {
        let run = DispatchRun(records: (1...3).map { Fixture.record($0, token: Fixture.token($0)) }) { _, _ in Fixture.ok() }
        run.transport.latency = 100
        var ended: CampaignSummary?
        run.dispatcher.start { summary, _ in ended = summary }
        run.scheduler.run(limit: 1)  // the first pump turn
        let tag = try #require(run.transport.inFlight.keys.min())
        run.dispatcher.transport(completed: tag, outcome: Fixture.ok())
        run.dispatcher.transportHasFreeSlots()
        #expect(run.sink.results.isEmpty, "the answer was handled inside the transport's callback")
        run.scheduler.run(limit: 1)  // the loop turn that handles the queued events
        #expect(run.sink.results.count == 1)
        run.scheduler.run()
        let summary = try #require(ended, "the run never finished")
        #expect(summary.count(.delivered) == 3, "the transport's own later answer for the same tag counted twice")
        #expect(run.sink.results.count == 3)
    }
}
