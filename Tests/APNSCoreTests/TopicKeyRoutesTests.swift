import APNSCore
import Testing

/// Which key a topic's requests go to when a run has several provider keys, and why an uncovered topic is not sent.
@Suite("topic key routes")
struct TopicKeyRoutesTests {
    static func topic(_ text: String) throws -> Topic { try Topic(validating: text) }

    let routes = TopicKeyRoutes(
        routes: [
            .init(bundleID: "com.example.app", key: 1), .init(bundleID: "com.example.app.widget", key: 2),
            .init(bundleID: "com.other", key: 3),
        ],
        defaultKey: nil)

    @Test("a bundle id covers itself and the topics under it after a dot; the longest bundle id wins")
    func longestBundleIDWins() throws {
        #expect(routes.key(for: try Self.topic("com.example.app")) == 1)
        #expect(routes.key(for: try Self.topic("com.example.app.voip")) == 1)
        #expect(routes.key(for: try Self.topic("com.example.app.push-type.liveactivity")) == 1)
        #expect(routes.key(for: try Self.topic("com.example.app.widget")) == 2)
        #expect(routes.key(for: try Self.topic("com.example.app.widget.voip")) == 2)
        #expect(routes.key(for: try Self.topic("com.other")) == 3)
    }

    @Test(
        "a topic that only starts with a bundle id's letters is not covered by it; the default key takes it when there is one"
    )
    func notAPrefixWithoutADot() throws {
        #expect(routes.key(for: try Self.topic("com.example.apps")) == nil)
        #expect(routes.key(for: try Self.topic("com.otherapp")) == nil)
        #expect(routes.key(for: try Self.topic("com.example")) == nil)
        let withDefault = TopicKeyRoutes(routes: routes.routes, defaultKey: 0)
        #expect(withDefault.key(for: try Self.topic("com.example.apps")) == 0)
        #expect(withDefault.key(for: try Self.topic("com.example.app")) == 1)
        #expect(withDefault.uncovered(try Self.topic("anything.else")) == nil)
    }

    @Test("an uncovered topic is TopicNotCovered, naming the topic, the bundle ids covered and the fix")
    func uncoveredReason() throws {
        let error = try #require(routes.uncovered(try Self.topic("com.third")))
        #expect(error.code == .topicNotCovered)
        #expect(error.code.rawValue == "TopicNotCovered")
        #expect(error.detail.contains("'com.third'"))
        #expect(error.detail.contains("com.example.app, com.example.app.widget, com.other"))
        #expect(error.detail.contains("--topic-key com.third="))
        #expect(routes.uncovered(try Self.topic("com.example.app.voip")) == nil)
    }
}
