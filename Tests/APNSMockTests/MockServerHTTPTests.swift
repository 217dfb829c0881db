import APNSCore
import Foundation
import Testing

@testable import APNSMock

/// The mock answered through curl: statuses, headers and bodies exactly as APNs sends them.
@Suite("Mock server over HTTP/2 (curl)")
struct MockServerHTTPTests {
    @Test("a valid request gets 200 with a UUID apns-id and an empty body")
    func accepted() throws {
        let fixture = try MockServerFixture()
        let result = try fixture.curl()
        #expect(result.exitStatus == 0, "\(result.stderr)")
        #expect(result.status == 200)
        let apnsID = try #require(result.headers["apns-id"])
        #expect((try? APNSID(parsing: apnsID))?.description == apnsID)
        #expect(result.headers["apns-unique-id"] == nil)
        #expect(result.body.isEmpty)
    }

    @Test("the request's own apns-id comes back; development mode adds apns-unique-id")
    func echoesAPNSIDInDevelopment() throws {
        let fixture = try MockServerFixture { $0.developmentMode = true }
        let own = "0b5a3c1e-7d2f-4a6b-9c8d-1e2f3a4b5c6d"
        let result = try fixture.curl(headers: [
            "authorization: \(fixture.authorization)", "apns-topic: \(MockServerFixture.topic)", "apns-id: \(own)",
        ])
        #expect(result.status == 200)
        #expect(result.headers["apns-id"] == own)
        let unique = try #require(result.headers["apns-unique-id"])
        #expect(unique != own)
        #expect((try? APNSID(parsing: unique)) != nil)
    }

    @Test("a token ending in dead gets 410 Unregistered with its timestamp")
    func unregistered() throws {
        let fixture = try MockServerFixture()
        let result = try fixture.curl(token: MockServerFixture.deadToken)
        #expect(result.status == 410)
        #expect(result.headers["apns-id"] != nil)
        let token = try DeviceToken(parsing: MockServerFixture.deadToken)
        let timestamp = TokenRegistry.derivedTimestamp(for: token)
        #expect(result.body == #"{"reason":"Unregistered","timestamp":\#(timestamp)}"#)
    }

    @Test("without authorization: 403 MissingProviderToken")
    func missingProviderToken() throws {
        let fixture = try MockServerFixture()
        let result = try fixture.curl(headers: ["apns-topic: \(MockServerFixture.topic)"])
        #expect(result.status == 403)
        #expect(result.body == #"{"reason":"MissingProviderToken"}"#)
        #expect(result.headers["apns-id"] != nil)
    }

    @Test("GET: 405 MethodNotAllowed")
    func methodNotAllowed() throws {
        let fixture = try MockServerFixture()
        let result = try fixture.curl(method: "GET")
        #expect(result.status == 405)
        #expect(result.body == #"{"reason":"MethodNotAllowed"}"#)
    }

    @Test("a token signed by an unknown key: 403 InvalidProviderToken; a topic not allowed: 400 TopicDisallowed")
    func credentialsAndTopic() throws {
        let fixture = try MockServerFixture()
        let stranger = try MockServerFixture()  // another key, unknown to the first server
        let invalid = try fixture.curl(headers: [
            "authorization: \(stranger.authorization)", "apns-topic: \(MockServerFixture.topic)",
        ])
        #expect(invalid.status == 403)
        #expect(invalid.body == #"{"reason":"InvalidProviderToken"}"#)
        let disallowed = try fixture.curl(headers: [
            "authorization: \(fixture.authorization)", "apns-topic: com.example.other",
        ])
        #expect(disallowed.status == 400)
        #expect(disallowed.body == #"{"reason":"TopicDisallowed"}"#)
        #expect(fixture.server.counters().byReason == ["InvalidProviderToken": 1, "TopicDisallowed": 1])
    }
}
