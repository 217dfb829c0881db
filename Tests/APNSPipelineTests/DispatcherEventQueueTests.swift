import APNSCore
import Testing

@testable import APNSPipeline

/// The dispatcher's events are queued and handled by one loop, never inside the transport's callback.
@Suite("Dispatcher event queue")
struct DispatcherEventQueueTests {
    @Test("a transport callback only queues its event: the answer's line is written on a later loop turn")
    func callbackOnlyQueues() throws {
        let run = DispatchRun(records: (1...3).map { Fixture.record($0, token: Fixture.token($0)) }) { _, _ in
            Fixture.ok()
        }
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

    @Test("a second signal whose flush fails still closes the transport, and the run ends with the failure")
    func abortWithFailingFlush() throws {
        let scheduler = ManualScheduler()
        let sink = FlushFailingSink()
        let transport = FakeTransport(scheduler: scheduler, capacity: 4) { _, _ in Fixture.ok() }
        transport.latency = 100
        let records = (1...10).map { Fixture.record($0, token: Fixture.token($0)) }
        let dispatcher = Dispatcher(
            configuration: DispatcherConfiguration(), reader: ArraySource(records), sink: sink, transport: transport,
            scheduler: scheduler, isFirstOccurrence: { _ in true })
        var ended: (summary: CampaignSummary, error: (any Error)?)?
        dispatcher.start { ended = ($0, $1) }
        scheduler.run(limit: 1)  // the first pump turn: four requests in flight
        sink.failing = true
        dispatcher.abortInFlight()
        #expect(transport.closed, "the close was dropped with the failed flush")
        scheduler.run(limit: 10_000)
        let end = try #require(ended, "the run never ended")
        #expect(end.error is FlushFailingSink.Failure)
        #expect(end.summary.ending == .interrupted)
    }
}

/// A sink whose flushes fail once `failing` is set.
private final class FlushFailingSink: ResultSink {
    struct Failure: Error {}
    var failing = false
    func write(_ result: ResultRecord) throws {}
    func journalSent(_ key: RecordKey) throws {}
    func journalRetryable(_ key: RecordKey) throws {}
    func flush() throws {
        if failing { throw Failure() }
    }
}
