import APNSCore
import APNSTransport
import Testing

/// `TopicRoutedTransport` over fake per-key transports: each request goes to its topic's key, waits there in order
/// when that key has no room, leaves only at a flush, and every tag is answered once, also on close.
@Suite("topic-routed transport")
struct TopicRoutedTransportTests {
    /// A key's transport: free slots set by the test, submits recorded.
    final class FakeLane: PushTransport {
        weak var delegate: (any PushTransportDelegate)?
        var freeSlots: Int
        var submitted: [(topic: String, tag: UInt64)] = []
        var flushes = 0
        var closed = false
        init(freeSlots: Int) { self.freeSlots = freeSlots }
        func submit(_ notification: PushNotification, tag: UInt64) {
            submitted.append((notification.topic.value, tag))
            freeSlots -= 1
        }
        func flush() { flushes += 1 }
        func close(gracePeriod: Double) { closed = true }
    }

    /// Hears the router as the dispatcher would.
    final class Listener: PushTransportDelegate {
        var completed: [UInt64: PushOutcome] = [:]
        var freed = 0
        var didClose = false
        func transport(completed tag: UInt64, outcome: consuming PushOutcome) { completed[tag] = outcome }
        func transportHasFreeSlots() { freed += 1 }
        func transportFailed(_ error: any Error) {}
        func transportDidClose() { didClose = true }
    }

    /// Work for the next loop turn, run when the test says.
    final class Turns {
        var work: [() -> Void] = []
        func run() {
            let now = work
            work = []
            for item in now { item() }
        }
    }

    static func notification(_ topic: String, _ number: Int = 1) throws -> PushNotification {
        PushNotification(
            token: try DeviceToken(parsing: String(repeating: "ab", count: 30) + String(format: "%04x", number)),
            topic: try Topic(validating: topic), pushType: .alert, payload: Array(#"{"aps":{}}"#.utf8))
    }

    struct Setup {
        let a = FakeLane(freeSlots: 2)
        let b = FakeLane(freeSlots: 0)
        let listener = Listener()
        let turns = Turns()
        let router: TopicRoutedTransport

        init() {
            let routes = TopicKeyRoutes(routes: [.init(bundleID: "com.b", key: 1)], defaultKey: 0)
            let turns = turns
            router = TopicRoutedTransport(
                transports: [a, b], labels: ["key A", "key B"], routes: routes, nextTurn: { turns.work.append($0) })
            router.delegate = listener
        }
    }

    @Test("each request goes to its topic's key; free slots are each key's less those waiting for it")
    func routesByTopic() throws {
        let setup = Setup()
        setup.b.freeSlots = 3
        #expect(setup.router.freeSlots == 5)
        setup.router.submit(try Self.notification("com.a"), tag: 1)
        setup.router.submit(try Self.notification("com.b.voip"), tag: 2)
        setup.router.submit(try Self.notification("com.b"), tag: 3)
        setup.router.submit(try Self.notification("com.other"), tag: 4)
        #expect(setup.a.submitted.map(\.tag) == [1, 4])
        #expect(setup.b.submitted.map(\.tag) == [2, 3])
        #expect(setup.router.freeSlots == 1)
        setup.router.flush()
        #expect(setup.a.flushes == 1 && setup.b.flushes == 1)
    }

    @Test("a request for a key without room waits, in order, and goes out after a flush once the key has room")
    func waitsForItsKey() throws {
        let setup = Setup()
        setup.router.submit(try Self.notification("com.b"), tag: 1)
        setup.router.submit(try Self.notification("com.b"), tag: 2)
        #expect(setup.b.submitted.isEmpty)
        #expect(setup.router.waitingRequests == 2)
        #expect(setup.router.freeSlots == 2)  // key A's two slots: key B's waiting requests do not hold them up
        // Room appears before the flush: nothing leaves unjournaled.
        setup.b.freeSlots = 1
        setup.b.delegate?.transportHasFreeSlots()
        setup.turns.run()
        #expect(setup.b.submitted.isEmpty)
        setup.router.flush()
        #expect(setup.b.submitted.map(\.tag) == [1])
        #expect(setup.router.waitingRequests == 1)
        // The answer to tag 1 frees its slot: tag 2 goes on the next turn, and that key is flushed.
        setup.b.freeSlots = 1
        setup.b.delegate?.transport(completed: 1, outcome: .answered(PushAnswer(status: 200)))
        #expect(setup.listener.completed[1] != nil)
        let flushesBefore = setup.b.flushes
        setup.turns.run()
        #expect(setup.b.submitted.map(\.tag) == [1, 2])
        #expect(setup.b.flushes == flushesBefore + 1)
        #expect(setup.router.waitingRequests == 0)
    }

    @Test("close answers every waiting request not sent, closes each key, and reports closed once all have")
    func closeAnswersWaiting() throws {
        let setup = Setup()
        setup.router.submit(try Self.notification("com.b"), tag: 7)
        setup.router.close(gracePeriod: 1)
        #expect(setup.a.closed && setup.b.closed)
        setup.turns.run()
        guard case .failed(let failure)? = setup.listener.completed[7] else {
            Issue.record("tag 7 not answered: \(setup.listener.completed)")
            return
        }
        #expect(failure.isSafeToResend)
        #expect("\(failure)".contains("key B"))
        setup.a.delegate?.transportDidClose()
        #expect(!setup.listener.didClose)
        setup.b.delegate?.transportDidClose()
        #expect(setup.listener.didClose)
    }

    @Test("a topic no key covers is answered not sent on the next turn, never inside submit")
    func uncoveredTopic() throws {
        let a = FakeLane(freeSlots: 5)
        let listener = Listener()
        let turns = Turns()
        let router = TopicRoutedTransport(
            transports: [a], routes: TopicKeyRoutes(routes: [.init(bundleID: "com.a", key: 0)], defaultKey: nil),
            nextTurn: { turns.work.append($0) })
        router.delegate = listener
        router.submit(try Self.notification("com.z"), tag: 9)
        #expect(listener.completed.isEmpty)
        turns.run()
        #expect(listener.completed[9] == .failed(.notSent("no provider key covers topic com.z")))
        #expect(a.submitted.isEmpty)
    }
}
