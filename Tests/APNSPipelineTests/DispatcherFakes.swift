import APNSCore
import Testing

@testable import APNSPipeline

/// A manual clock: tasks run in time order as the test advances it.
final class ManualScheduler: LoopScheduler {
    private(set) var now: Double = 0
    /// The wall clock at `now` 0; it moves with `now`, in whole seconds.
    var epochAtStart: Int64 = 1_800_000_000
    var epochSeconds: Int64 { epochAtStart + Int64(now) }
    private var tasks: [(at: Double, order: Int, body: () -> Void)] = []
    private var order = 0

    func schedule(after delay: Double, _ body: @escaping () -> Void) {
        tasks.append((now + max(0, delay), order, body))
        order += 1
    }

    /// Runs tasks until none is left or `limit` tasks ran; returns how many ran.
    @discardableResult
    func run(limit: Int = 1_000_000) -> Int {
        var ran = 0
        while ran < limit,
            let index = tasks.indices.min(by: { (tasks[$0].at, tasks[$0].order) < (tasks[$1].at, tasks[$1].order) })
        {
            let task = tasks.remove(at: index)
            now = max(now, task.at)
            task.body()
            ran += 1
        }
        return ran
    }
}

/// Records pulled from an array.
final class ArraySource: RecordReader {
    private var records: [CampaignRecord]
    private var index = 0
    private(set) var pulled = 0
    init(_ records: [CampaignRecord]) { self.records = records }
    func nextRecord() throws -> CampaignRecord? {
        guard index < records.count else { return nil }
        defer { index += 1 }
        pulled += 1
        return records[index]
    }
}

/// Keeps results and journal entries, and what had been flushed when.
final class RecordingSink: ResultSink {
    private(set) var results: [ResultRecord] = []
    private(set) var journaledSent: [RecordKey] = []
    private(set) var journaledRetryable: [RecordKey] = []
    private(set) var flushedSentCount = 0

    func write(_ result: ResultRecord) throws { results.append(result) }
    func journalSent(_ key: RecordKey) throws { journaledSent.append(key) }
    func journalRetryable(_ key: RecordKey) throws { journaledRetryable.append(key) }
    func flush() throws { flushedSentCount = journaledSent.count }

    func outcome(of key: RecordKey) -> [RecordOutcome] { results.filter { $0.key == key }.map(\.outcome) }
}

/// An in-memory transport with a fixed number of slots; answers come a fixed latency after `flush()`.
final class FakeTransport: PushTransport {
    weak var delegate: (any PushTransportDelegate)?
    let scheduler: ManualScheduler
    var capacity: Int
    var latency = 0.01
    /// Decides the outcome of each send: token hex and how many times this token was sent before.
    var answer: (_ token: String, _ previousSends: Int) -> PushOutcome
    private(set) var inFlight: [UInt64: PushNotification] = [:]
    private var unflushed: [UInt64] = []
    private(set) var sends: [String: Int] = [:]
    private(set) var totalSends = 0
    /// The `apns-expiration` epoch of each send, in the order they went out (nil: no header).
    private(set) var expirationsSent: [Int64?] = []
    private(set) var maximumInFlight = 0
    /// What the dispatcher said it may keep in flight (`expectInFlight`), in order.
    private(set) var reachesTold: [Int] = []
    private(set) var closed = false
    /// Set by tests to check the journal was flushed before the network.
    var sink: RecordingSink?
    private(set) var journalViolations = 0

    init(scheduler: ManualScheduler, capacity: Int, answer: @escaping (String, Int) -> PushOutcome) {
        self.scheduler = scheduler
        self.capacity = capacity
        self.answer = answer
    }

    var freeSlots: Int { closed ? 0 : max(0, capacity - inFlight.count) }

    func submit(_ notification: PushNotification, tag: UInt64) {
        precondition(freeSlots > 0, "submitted without a free slot")
        inFlight[tag] = notification
        unflushed.append(tag)
        maximumInFlight = max(maximumInFlight, inFlight.count)
    }

    func expectInFlight(atMost reach: Int) { reachesTold.append(reach) }

    func flush() {
        if let sink, sink.flushedSentCount < sink.journaledSent.count { journalViolations += 1 }
        let tags = unflushed
        unflushed = []
        for tag in tags {
            guard let notification = inFlight[tag] else { continue }
            let token = notification.token.hex
            let previous = sends[token, default: 0]
            sends[token] = previous + 1
            totalSends += 1
            expirationsSent.append(notification.expiration?.epochSeconds)
            let outcome = self.answer(token, previous)
            scheduler.schedule(after: latency) { [weak self] in
                guard let self, self.inFlight.removeValue(forKey: tag) != nil else { return }
                self.delegate?.transport(completed: tag, outcome: outcome)
                self.delegate?.transportHasFreeSlots()
            }
        }
    }

    func close(gracePeriod: Double) {
        guard !closed else { return }
        closed = true
        scheduler.schedule(after: 0) { [weak self] in
            guard let self else { return }
            for tag in self.inFlight.keys.sorted() {
                self.inFlight[tag] = nil
                self.delegate?.transport(completed: tag, outcome: .failed(.answerLost("connection closed")))
            }
            self.delegate?.transportDidClose()
        }
    }
}

enum Fixture {
    static let topic = "com.example.app"

    static func token(_ index: Int, suffix: String = "") -> String {
        let hex = String(index, radix: 16)
        let body = String(repeating: "0", count: 64 - hex.count - suffix.count) + hex + suffix
        return body
    }

    static func record(_ line: Int, token: String, topic: String = topic) -> CampaignRecord {
        do {
            let notification = PushNotification(
                token: try DeviceToken(parsing: token), topic: try Topic(validating: topic), pushType: .alert,
                payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
            return CampaignRecord(key: RecordKey(fileIndex: 0, line: line), content: .notification(notification))
        } catch {
            return CampaignRecord(
                key: RecordKey(fileIndex: 0, line: line),
                content: .invalid(error, tokenText: token, topicText: topic))
        }
    }

    static func ok(_ id: String = "00000000-0000-4000-8000-000000000000") -> PushOutcome {
        .answered(PushAnswer(status: 200, apnsID: id))
    }

    static func rejected(_ status: Int, _ reason: APNSReason, timestamp: Int64? = nil) -> PushOutcome {
        .answered(PushAnswer(status: status, apnsID: "x", reason: reason, timestamp: timestamp))
    }
}

/// Runs a dispatcher to the end over fakes.
final class DispatchRun {
    let scheduler = ManualScheduler()
    let sink = RecordingSink()
    let transport: FakeTransport
    let source: ArraySource
    let dispatcher: Dispatcher
    var summary: CampaignSummary?

    init(
        records: [CampaignRecord], capacity: Int = 4,
        configuration: DispatcherConfiguration = DispatcherConfiguration(),
        resume: @escaping (RecordKey) -> ResumeStatus = { _ in .fresh },
        resumedSends: @escaping (RecordKey) -> Int = { _ in 0 },
        answer: @escaping (String, Int) -> PushOutcome
    ) {
        transport = FakeTransport(scheduler: scheduler, capacity: capacity, answer: answer)
        transport.sink = sink
        source = ArraySource(records)
        var seen = Set<String>()
        dispatcher = Dispatcher(
            configuration: configuration, reader: source, sink: sink, transport: transport, scheduler: scheduler,
            isFirstOccurrence: { seen.insert($0.token.hex + "\u{0}" + $0.topic.value).inserted },
            resumeStatus: resume, resumedSends: resumedSends)
    }

    /// Expects exactly one result line for each of `records` records.
    func expectOneLineEach(records: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let keys = sink.results.map(\.key)
        #expect(
            keys.count == records, "\(keys.count) result lines for \(records) records", sourceLocation: sourceLocation)
        #expect(Set(keys).count == keys.count, "a record has two result lines", sourceLocation: sourceLocation)
    }

    func run(interruptAfter: Int? = nil) -> CampaignSummary? {
        var result: CampaignSummary?
        dispatcher.start { summary, _ in result = summary }
        if let interruptAfter {
            scheduler.run(limit: interruptAfter)
            dispatcher.interrupt()
        }
        scheduler.run()
        summary = result
        return result
    }
}

/// A pump step as the machine tests compare it: a send to submit by its record's line.
enum PumpStepKind: Equatable {
    case none
    case submit(line: Int)
    case readRecord
    case endTurn
}

extension DispatcherAction {
    /// What its pump step is, without taking the send it may hold.
    var step: PumpStepKind {
        switch pumpStep {
        case .none: return .none
        case .submit(let send): return .submit(line: send.key.line)
        case .readRecord: return .readRecord
        case .endTurn: return .endTurn
        }
    }
}
