import APNSCore
import Testing
@testable import APNSMock

@Suite("Counters")
struct MockCountersTests {
    @Test("the validator counts requests by status, reason and connection, and renders them")
    func countsAndRenders() throws {
        var validator = try MockValidator(configuration: MockConfiguration(), clock: .fixed(epochSeconds: MockTestSupport.now))
        var first = validator.openConnection(clientCertificate: MockTestSupport.certificate)
        var second = validator.openConnection(clientCertificate: MockTestSupport.certificate)
        _ = validator.handle(MockTestSupport.request(), connection: &first)
        _ = validator.handle(MockTestSupport.request(streamID: 3, method: "GET"), connection: &first)
        _ = validator.handle(MockTestSupport.request(path: "/3/device/\(MockTestSupport.token(endingIn: "dead"))"), connection: &second)
        _ = validator.handle(MockTestSupport.request(streamID: 3, path: "/3/device/\(MockTestSupport.token(endingIn: "dead"))"), connection: &second)

        let counters = validator.counters
        #expect(counters.requests == 4)
        #expect(counters.answered == 4)
        #expect(counters.connectionsOpened == 2)
        #expect(counters.byStatus == [200: 1, 405: 1, 410: 2])
        #expect(counters.byReason == ["MethodNotAllowed": 1, "Unregistered": 2])
        #expect(counters.byConnection == [first.id: 2, second.id: 2])
        #expect(counters.streamLimitRaises == 2)
        #expect(counters.json == """
            {"requests":4,"answered":4,"connections":2,"by_status":{"200":1,"405":1,"410":2},\
            "by_reason":{"MethodNotAllowed":1,"Unregistered":2},"by_connection":{"1":2,"2":2},"goaways":0,"drops":0,\
            "refused_streams":0,"stream_limit_raises":2,"stream_limit_lowerings":0,"delayed_answers":0,"fault_answers":0,\
            "signature_verifications":0}
            """)
        #expect(counters.summary == """
            requests 4 (answered 4) on 2 connections
            status 200: 1, 405: 1, 410: 2
            reason Unregistered: 2, MethodNotAllowed: 1
            events goaway 0, drop 0, refused 0, raise 2, lower 0, delayed 0, fault answers 0, signature checks 0

            """)
    }

    @Test("empty counters render as zeros")
    func empty() {
        let counters = MockCounters()
        #expect(counters.json.hasPrefix(#"{"requests":0,"answered":0,"connections":0,"by_status":{},"by_reason":{}"#))
        #expect(counters.summary.contains("status none"))
    }
}
