import APNSCore
import Foundation
import Testing

@testable import APNSMock

/// The mock under h2load: many streams per connection, counters that add up, and faults as a load tool sees them.
@Suite("Mock server under h2load")
struct MockServerLoadTests {
    @Test("h2load -n 2000 -c 2 -m 100 gets 2000 answers of 200, and the counters say so")
    func hundredStreams() throws {
        let fixture = try MockServerFixture()
        let run = try fixture.h2load(requests: 2000, clients: 2, streams: 100)
        #expect(run.succeeded == 2000, "\(run.output)")
        #expect(run.errored == 0)
        #expect(run.status("2xx") == 2000)
        let counters = fixture.server.counters()
        #expect(counters.requests == 2000)
        #expect(counters.byStatus == [200: 2000])
        #expect(counters.connectionsOpened == 2)
        #expect(counters.streamLimitRaises == 2)
        #expect(counters.byConnection.values.reduce(0, +) == 2000)
        #expect(counters.signatureVerifications == 2)  // each connection verifies its token once
    }

    @Test("counters by status and reason add up to what h2load saw, over good, dead and bad tokens")
    func countersAddUp() throws {
        let fixture = try MockServerFixture()
        let urls = [MockServerFixture.goodToken, MockServerFixture.deadToken, MockServerFixture.badToken].map {
            fixture.url(token: $0)
        }
        let run = try fixture.h2load(requests: 600, clients: 2, streams: 50, urls: urls)
        #expect(run.succeeded + run.failed == 600, "\(run.output)")  // h2load counts only 2xx as succeeded
        #expect(run.errored == 0)
        #expect(run.status("2xx") == 200)
        #expect(run.status("4xx") == 400)
        let counters = fixture.server.counters()
        #expect(counters.requests == 600)
        #expect(counters.answered == 600)
        #expect(counters.byStatus == [200: 200, 410: 200, 400: 200])
        #expect(counters.byReason == ["Unregistered": 200, "BadDeviceToken": 200])
        #expect(counters.json.contains(#""by_status":{"200":200,"400":200,"410":200}"#))
    }

    @Test("goaway=after:50: h2load's connection ends after exactly 50 answers")
    func goawayUnderLoad() throws {
        let fixture = try MockServerFixture { $0.faults = try FaultPlan(parsing: ["goaway=after:50"]) }
        let run = try fixture.h2load(requests: 200, clients: 1, streams: 10)
        #expect(run.succeeded == 50, "\(run.output)")
        #expect(run.status("2xx") == 50)
        let counters = fixture.server.counters()
        #expect(counters.goaways == 1)
        #expect(counters.answered == 50)
    }

    @Test("drop=every:1: curl's connection is closed with no answer")
    func dropUnderCurl() throws {
        let fixture = try MockServerFixture { $0.faults = try FaultPlan(parsing: ["drop=every:1"]) }
        let result = try fixture.curl()
        #expect(result.status == 0)
        #expect(result.exitStatus != 0)
        let counters = fixture.server.counters()
        #expect(counters.drops == 1)
        #expect(counters.answered == 0)
        #expect(fixture.server.openConnectionCount() == 0)
    }

    @Test("429=every:2 replaces every second would-be 200 with 429 TooManyRequests")
    func faultAnswers() throws {
        let fixture = try MockServerFixture { $0.faults = try FaultPlan(parsing: ["429=every:2"]) }
        let run = try fixture.h2load(requests: 100, clients: 1, streams: 10)
        #expect(run.errored == 0, "\(run.output)")
        #expect(run.status("2xx") == 50)
        #expect(run.status("4xx") == 50)
        let counters = fixture.server.counters()
        #expect(counters.byReason == ["TooManyRequests": 50])
        #expect(counters.faultAnswers == 50)
    }
}
