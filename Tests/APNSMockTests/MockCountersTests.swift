import APNSCore
import Testing

@testable import APNSMock

@Suite("Counters")
struct MockCountersTests {
    @Test("the validator counts requests by status, reason and connection, and renders them")
    func countsAndRenders() throws {
        var validator = try MockValidator(
            configuration: MockConfiguration(), clock: .fixed(epochSeconds: MockTestSupport.now))
        var first = validator.openConnection(clientCertificate: MockTestSupport.certificate)
        var second = validator.openConnection(clientCertificate: MockTestSupport.certificate)
        _ = validator.handle(MockTestSupport.request(), connection: &first)
        _ = validator.handle(MockTestSupport.request(streamID: 3, method: "GET"), connection: &first)
        _ = validator.handle(
            MockTestSupport.request(path: "/3/device/\(MockTestSupport.token(endingIn: "dead"))"), connection: &second)
        _ = validator.handle(
            MockTestSupport.request(streamID: 3, path: "/3/device/\(MockTestSupport.token(endingIn: "dead"))"),
            connection: &second)

        let counters = validator.counters
        #expect(counters.requests == 4)
        #expect(counters.answered == 4)
        #expect(counters.connectionsOpened == 2)
        #expect(counters.byStatus == [200: 1, 405: 1, 410: 2])
        #expect(counters.byReason == ["MethodNotAllowed": 1, "Unregistered": 2])
        #expect(counters.byConnection == [first.id: 2, second.id: 2])
        #expect(counters.streamLimitRaises == 2)
        #expect(
            counters.json == """
                {"requests":4,"answered":4,"connections":2,"by_status":{"200":1,"405":1,"410":2},\
                "by_reason":{"MethodNotAllowed":1,"Unregistered":2},"by_connection":{"1":2,"2":2},"goaways":0,"drops":0,\
                "refused_streams":0,"stream_limit_raises":2,"stream_limit_lowerings":0,"delayed_answers":0,"fault_answers":0,\
                "signature_verifications":0}
                """)
        #expect(
            counters.summary == """
                requests 4 (answered 4) on 2 connections
                status 200: 1, 405: 1, 410: 2
                reason Unregistered: 2, MethodNotAllowed: 1
                events goaway 0, drop 0, refused 0, raise 2, lower 0, delayed 0, fault answers 0, signature checks 0

                """)
    }

    @Test("connections taking turns in runs of any length are each counted exactly, whatever the order")
    func interleavedConnections() throws {
        var validator = try MockValidator(
            configuration: MockConfiguration(), clock: .fixed(epochSeconds: MockTestSupport.now))
        var connections = (0..<3).map { _ in validator.openConnection(clientCertificate: MockTestSupport.certificate) }
        var expected: [Int: Int] = [:]
        var expectedStatus: [Int: Int] = [:]
        var generator = SplitMix64(seed: 7)
        for step in 0..<300 {
            let which = Int(generator.next() % 3)
            let run = 1 + Int(generator.next() % 4)
            for _ in 0..<run {
                let get = (step + run) % 5 == 0
                _ = validator.handle(
                    MockTestSupport.request(method: get ? "GET" : "POST"), connection: &connections[which])
                expected[connections[which].id, default: 0] += 1
                expectedStatus[get ? 405 : 200, default: 0] += 1
            }
            if step % 50 == 0 {
                #expect(validator.counters.byConnection == expected, "step \(step)")
            }
        }
        #expect(validator.counters.byConnection == expected)
        #expect(validator.counters.byStatus == expectedStatus)
        #expect(validator.counters.answered == expected.values.reduce(0, +))
        // The same counts reached in another order are equal counters.
        var other = try MockValidator(
            configuration: MockConfiguration(), clock: .fixed(epochSeconds: MockTestSupport.now))
        var otherConnections = (0..<3).map { _ in other.openConnection(clientCertificate: MockTestSupport.certificate) }
        for (index, connection) in otherConnections.enumerated() {
            let posts = expected[connection.id, default: 0]
            for _ in 0..<posts { _ = other.handle(MockTestSupport.request(), connection: &otherConnections[index]) }
        }
        #expect(other.counters.byConnection == validator.counters.byConnection)
        #expect(other.counters != validator.counters)  // all 200s there
        #expect(other.counters.byStatus == [200: expected.values.reduce(0, +)])
    }

    @Test("empty counters render as zeros")
    func empty() {
        let counters = MockCounters()
        #expect(counters.json.hasPrefix(#"{"requests":0,"answered":0,"connections":0,"by_status":{},"by_reason":{}"#))
        #expect(counters.summary.contains("status none"))
    }
}
