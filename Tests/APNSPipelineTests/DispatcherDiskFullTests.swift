import APNSCore
import Testing

@testable import APNSPipeline

/// A result sink on a disk that fills up: the first `room` results are written, every later write fails, and
/// once the disk is full every flush fails too (the buffered bytes cannot go out), as `ResultFileSink` does.
final class DiskFullSink: ResultSink {
    struct DiskFull: Error, CustomStringConvertible {
        var description: String { "No space left on device" }
    }

    let room: Int
    /// Every result the dispatcher tried to write, written or not.
    private(set) var attempted: [ResultRecord] = []
    private var written = 0

    init(room: Int) { self.room = room }

    func write(_ result: ResultRecord) throws {
        attempted.append(result)
        guard written < room else { throw DiskFull() }
        written += 1
    }

    func journalSent(_ key: RecordKey) throws {}
    func journalRetryable(_ key: RecordKey) throws {}
    func flush() throws {
        if written >= room { throw DiskFull() }
    }
}

/// A transport whose socket takes only `sentPerFlush` requests per flush; the rest stay queued, unsent. Like the
/// real pool, `close` answers at once, from inside the call, every request it holds: queued ones as not sent,
/// except when the close comes from inside one of its own answer callbacks, where (as the pool's nested drain
/// does) it can no longer tell and reports them as answer lost.
final class QueueingTransport: PushTransport {
    weak var delegate: (any PushTransportDelegate)?
    let scheduler: ManualScheduler
    let capacity: Int
    let sentPerFlush: Int
    let answer: (String) -> PushOutcome
    private var queued: [(tag: UInt64, token: String)] = []
    private var onTheWire: [UInt64: String] = [:]
    private var delivering = 0
    private(set) var sentTokens: Set<String> = []
    private(set) var closedFromCallback = false
    private(set) var closed = false

    init(scheduler: ManualScheduler, capacity: Int, sentPerFlush: Int, answer: @escaping (String) -> PushOutcome) {
        self.scheduler = scheduler
        self.capacity = capacity
        self.sentPerFlush = sentPerFlush
        self.answer = answer
    }

    var freeSlots: Int { closed ? 0 : max(0, capacity - queued.count - onTheWire.count) }

    func submit(_ notification: PushNotification, tag: UInt64) {
        queued.append((tag, notification.token.hex))
    }

    func flush() {
        let leaving = queued.prefix(sentPerFlush)
        queued.removeFirst(leaving.count)
        for (tag, token) in leaving {
            onTheWire[tag] = token
            sentTokens.insert(token)
            scheduler.schedule(after: 0.01) { [weak self] in
                guard let self, self.onTheWire.removeValue(forKey: tag) != nil else { return }
                self.report(tag, self.answer(token))
            }
        }
    }

    func close(gracePeriod: Double) {
        guard !closed else { return }
        closed = true
        closedFromCallback = delivering > 0
        let unsent = queued
        queued = []
        for (tag, _) in unsent {
            report(tag, .failed(closedFromCallback ? .answerLost("connection closed") : .notSent("connection closed")))
        }
        for tag in onTheWire.keys.sorted() {
            onTheWire[tag] = nil
            report(tag, .failed(.answerLost("connection closed")))
        }
        delegate?.transportDidClose()
    }

    private func report(_ tag: UInt64, _ outcome: PushOutcome) {
        delivering += 1
        defer { delivering -= 1 }
        delegate?.transport(completed: tag, outcome: outcome)
    }
}

@Suite("Dispatcher on a full disk")
struct DispatcherDiskFullTests {
    @Test("a result write failing inside an answer callback: records that never left end not_sent, not in_doubt")
    func diskFullInsideAnswerCallback() throws {
        let scheduler = ManualScheduler()
        let sink = DiskFullSink(room: 1)
        let transport = QueueingTransport(scheduler: scheduler, capacity: 6, sentPerFlush: 2) { _ in
            .answered(PushAnswer(status: 403, apnsID: "x", reason: .invalidProviderToken))
        }
        var configuration = DispatcherConfiguration()
        configuration.stopAfterConsecutiveFailures = 1
        let records = (1...6).map { Fixture.record($0, token: Fixture.token($0)) }
        let dispatcher = Dispatcher(
            configuration: configuration, reader: ArraySource(records), sink: sink, transport: transport,
            scheduler: scheduler, isFirstOccurrence: { _ in true })
        var ended: (summary: CampaignSummary, error: (any Error)?)?
        dispatcher.start { ended = ($0, $1) }
        scheduler.run(limit: 10_000)

        let (summary, error) = try #require(ended, "the run never finished")
        #expect(error is DiskFullSink.DiskFull)
        #expect(!transport.closedFromCallback, "the transport was closed from inside its own answer callback")
        let neverSent = sink.attempted.filter { !transport.sentTokens.contains($0.token ?? "") }
        #expect(neverSent.count == 4)
        for result in neverSent {
            #expect(result.outcome == .notSent, "line \(result.key.line) never left and came out \(result.outcome)")
        }
        let sentUnanswered = transport.sentTokens.count - 1
        #expect(summary.count(.inDoubt) <= sentUnanswered, "records that never left counted in doubt")
        #expect(Set(sink.attempted.map(\.key)).count == sink.attempted.count, "a record has two result lines")
    }
}
