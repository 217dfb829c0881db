import APNSCore
import Testing

@testable import APNSPipeline

/// `TopicCoverageReader`: with several provider keys, a valid record whose topic no key covers becomes
/// `TopicNotCovered`, echoing its token and topic; everything else passes through unchanged.
@Suite("topic coverage reader")
struct TopicCoverageReaderTests {
    @Test("uncovered topics become TopicNotCovered input errors; covered and invalid records pass as they are")
    func marksUncovered() throws {
        let token = String(repeating: "ab", count: 32)
        let records = [
            Fixture.record(1, token: token, topic: "com.a"),
            Fixture.record(2, token: token, topic: "com.z"),
            Fixture.record(3, token: token, topic: "com.a.voip"),
            Fixture.record(4, token: "not hex", topic: "com.z"),
            Fixture.record(5, token: token, topic: "com.z"),
        ]
        let routes = TopicKeyRoutes(routes: [.init(bundleID: "com.a", key: 0)], defaultKey: nil)
        let reader = TopicCoverageReader(ArraySource(records), routes: routes)
        var read: [CampaignRecord] = []
        while let record = try reader.nextRecord() { read.append(record) }
        #expect(read.map(\.key.line) == [1, 2, 3, 4, 5])
        #expect(read[0].notification?.topic.value == "com.a")
        #expect(read[1].error?.code == .topicNotCovered)
        #expect(read[1].topicText == "com.z")
        #expect(read[1].tokenText == token)
        #expect(read[2].notification != nil)
        #expect(read[3].error?.code == .tokenNotHex)
        #expect(read[4].error?.code == .topicNotCovered)
    }
}
