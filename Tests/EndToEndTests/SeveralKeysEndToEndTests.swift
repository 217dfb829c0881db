import Foundation
import Testing

/// `send --topic-key` against a mock that knows two keys of two teams, each scoped to its app's bundle id
/// (`mock --key-topic`): each topic's requests are signed by its own key on connections of their own, so every
/// record is delivered and no connection carries both teams' tokens; a topic no key covers ends `input_error`
/// `TopicNotCovered`, and a default topic no key covers refuses the campaign (docs/CONNECTING.md, "Several
/// provider keys").
@Suite("several provider keys end to end", .serialized)
struct SeveralKeysEndToEndTests {
    static let secondKeyID = "SECOND0001"
    static let secondTeamID = "TEAMID0002"
    static let secondTopic = "com.example.second"
    static let secondKeyFile = Tool.path("Tests/Fixtures/crypto/AuthKey_SECOND0001.p8")
    static let secondPublicKey = Tool.path("Tests/Fixtures/crypto/AuthKey_SECOND0001.pub.pem")

    static func token(_ number: Int) -> String { String(repeating: "7a", count: 28) + String(format: "%08x", number) }

    /// A mock that accepts the sample key for `MockProcess.topic` and the second key for `secondTopic` only.
    static func mock(logAccepted: String) throws -> MockProcess {
        try MockProcess([
            "--key-id", secondKeyID, "--team-id", secondTeamID, "--public-key", secondPublicKey, "--topic", secondTopic,
            "--key-topic", "\(MockProcess.keyID)=\(MockProcess.topic)", "--key-topic", "\(secondKeyID)=\(secondTopic)",
            "--log-accepted", logAccepted,
        ])
    }

    /// `send`'s options for the mock, without its single key and default topic.
    static func endpointArguments(_ mock: MockProcess) -> [String] {
        ["--endpoint", "https://127.0.0.1:\(mock.port)", "--ca-file", mock.caFile, "--progress", "none"]
    }

    static let topicKeys = [
        "--topic-key",
        "\(MockProcess.topic)=\(MockProcess.keyFile),key-id=\(MockProcess.keyID),team-id=\(MockProcess.teamID)",
        "--topic-key", "\(secondTopic)=\(secondKeyFile),key-id=\(secondKeyID),team-id=\(secondTeamID)",
    ]

    @Test(
        "two topics, two keys of two teams: every record delivered, each connection one team's; an uncovered topic is TopicNotCovered"
    )
    func twoKeysTwoTeams() throws {
        let directory = try TemporaryDirectory()
        let campaign = directory.file("campaign.ndjson")
        var lines: [String] = []
        for number in 1...40 {
            let topic = number % 2 == 0 ? Self.secondTopic : MockProcess.topic
            lines.append(#"{"token":"\#(Self.token(number))","topic":"\#(topic)","payload":{"aps":{"alert":"hi"}}}"#)
        }
        lines.append(#"{"token":"\#(Self.token(99))","topic":"com.example.third","payload":{"aps":{"alert":"hi"}}}"#)
        try (lines.joined(separator: "\n") + "\n").write(toFile: campaign, atomically: true, encoding: .utf8)
        let accepted = directory.file("accepted.ndjson")
        let mock = try Self.mock(logAccepted: accepted)
        let results = directory.file("results.ndjson")
        let sent = try Tool.run(
            ["send", campaign, "--results", results, "--connections", "2"] + Self.topicKeys
                + Self.endpointArguments(mock))
        _ = try mock.stop()
        #expect(sent.status == 2, "exit \(sent.status) (2: some records not delivered): \(sent.stderr)")

        let resultLines = try Results.read(results)
        #expect(resultLines.count == 41)
        let delivered = resultLines.filter { $0["outcome"] as? String == "delivered" }
        #expect(delivered.count == 40, "\(resultLines.filter { $0["outcome"] as? String != "delivered" })")
        let uncovered = try #require(resultLines.first { $0["token"] as? String == Self.token(99) })
        #expect(uncovered["outcome"] as? String == "input_error")
        #expect(uncovered["reason"] as? String == "TopicNotCovered")
        let detail = uncovered["detail"] as? String ?? ""
        #expect(detail.contains("com.example.third") && detail.contains(Self.secondTopic), "\(uncovered)")

        // Each topic is its own team's here, so a connection whose accepted topics are one topic carried one team.
        var topicsByConnection: [Int: Set<String>] = [:]
        let logged = try Results.read(accepted)
        for line in logged {
            guard let connection = line["connection"] as? Int, let topic = line["topic"] as? String else { continue }
            topicsByConnection[connection, default: []].insert(topic)
        }
        #expect(logged.count == 40)
        #expect(topicsByConnection.count >= 2)
        #expect(topicsByConnection.values.allSatisfy { $0.count == 1 }, "\(topicsByConnection)")
        #expect(Set(topicsByConnection.values.flatMap { $0 }) == [MockProcess.topic, Self.secondTopic])
    }

    @Test("--key signs the topics no --topic-key names, beside a key of its own for the second app")
    func defaultKeyBesideATopicKey() throws {
        let directory = try TemporaryDirectory()
        let campaign = directory.file("campaign.ndjson")
        let lines = (1...12).map { number in
            let topic = number % 3 == 0 ? Self.secondTopic : MockProcess.topic
            return #"{"token":"\#(Self.token(number))","topic":"\#(topic)","payload":{"aps":{"alert":"hi"}}}"#
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: campaign, atomically: true, encoding: .utf8)
        let accepted = directory.file("accepted.ndjson")
        let mock = try Self.mock(logAccepted: accepted)
        let results = directory.file("results.ndjson")
        let sent = try Tool.run(
            [
                "send", campaign, "--results", results, "--key", MockProcess.keyFile, "--key-id", MockProcess.keyID,
                "--team-id", MockProcess.teamID, "--topic-key",
                "\(Self.secondTopic)=\(Self.secondKeyFile),key-id=\(Self.secondKeyID),team-id=\(Self.secondTeamID)",
            ]
                + Self.endpointArguments(mock))
        _ = try mock.stop()
        #expect(sent.status == 0, "exit \(sent.status): \(sent.stderr)")
        let outcomes = try Results.read(results).compactMap { $0["outcome"] as? String }
        #expect(outcomes == Array(repeating: "delivered", count: 12))
    }

    @Test("a default --topic no key covers refuses the campaign before anything is sent, naming the topic")
    func uncoveredDefaultTopicRefused() throws {
        let directory = try TemporaryDirectory()
        let campaign = directory.file("campaign.ndjson")
        try #"{"token":"\#(Self.token(1))","payload":{"aps":{"alert":"hi"}}}"#.appending("\n")
            .write(toFile: campaign, atomically: true, encoding: .utf8)
        let results = directory.file("results.ndjson")
        let sent = try Tool.run(
            [
                "send", campaign, "--results", results, "--topic", "com.example.third", "--endpoint",
                "https://127.0.0.1:9",
                "--progress", "none",
            ] + Self.topicKeys)
        #expect(sent.status == 64, "exit \(sent.status): \(sent.stderr)")
        #expect(
            sent.stderr.contains("--topic com.example.third: no provider key covers topic 'com.example.third'"),
            "\(sent.stderr)")
        #expect(!FileManager.default.fileExists(atPath: results))
    }
}
