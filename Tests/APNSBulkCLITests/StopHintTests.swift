import APNSPipeline
import ArgumentParser
import Testing

@testable import APNSBulkCLI

/// What a stopped campaign tells its user to do, and the `--cert … --key …` mix-up named with its fix.
@Suite("stop hints and credential messages")
struct StopHintTests {
    let hint = StopHint(
        keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.wrong.app",
        endpoint: "https://api.push.apple.com:443", environment: .production,
        arguments: ["send", "spring sale.ndjson", "--results", "out/spring sale.ndjson", "--topic", "com.wrong.app"])

    @Test(
        "every stop names what was sent and the same command, the setting to fix replaced, that continues the campaign")
    func lines() throws {
        let same = "apns-bulk send 'spring sale.ndjson' --results 'out/spring sale.ndjson' --topic com.wrong.app"
        let token = try #require(hint.line(forStop: "InvalidProviderToken on 5 requests in a row"))
        #expect(token.contains("--key-id ABC123DEFG and --team-id DEF123GHIJ") && token.contains("App Store Connect"))
        #expect(token.hasSuffix(": " + same), "\(token)")
        let topic = try #require(hint.line(forStop: "TopicDisallowed on 5 requests in a row"))
        #expect(topic.contains("com.wrong.app") && topic.contains("DEF123GHIJ"))
        #expect(topic.hasSuffix("--results 'out/spring sale.ndjson' --topic YOUR_TOPIC"), "\(topic)")
        #expect(hint.line(forStop: "UnrelatedKeyIdInToken on 5 requests in a row")?.contains("--endpoint") == true)
        #expect(
            hint.line(forStop: "InvalidPushType on 5 requests in a row")?.hasSuffix(
                same + " --push-type YOUR_PUSH_TYPE") == true)
        #expect(hint.line(forStop: "BadCertificateEnvironment on 5 requests in a row")?.contains("environment") == true)
        #expect(hint.line(forStop: "transport failed: connect refused")?.hasSuffix(": " + same) == true)
    }

    @Test("the hint read off a campaign record names its ids, topic and environment, and continues it the same way")
    func fromManifest() throws {
        var manifest = CampaignManifest(
            identity: CampaignIdentity(command: "send", inputs: [], settings: [:]),
            arguments: [
                "send", "c.ndjson", "--key-id=KEY1234567", "--topic", "com.wrong.app", "--endpoint", "development",
            ],
            startedAt: 0)
        manifest.environment = "development"
        let read = StopHint(manifest: manifest, environmentVariables: ["APNS_TEAM_ID": "TEAM123456"])
        #expect(read.keyID == "KEY1234567" && read.teamID == "TEAM123456" && read.topic == "com.wrong.app")
        #expect(read.environment == .development && read.endpoint == "development")
        let fix = read.fix(forStop: "BadDeviceToken for every token of topic com.wrong.app (20 answers, none accepted)")
        #expect(fix.advice.contains("the development environment"), "\(fix.advice)")
        #expect(
            fix.command == "apns-bulk send c.ndjson --key-id=KEY1234567 --topic com.wrong.app --endpoint production")
        let token = read.fix(forStop: "InvalidProviderToken on 5 requests in a row")
        #expect(token.advice.contains("--key-id KEY1234567 and --team-id TEAM123456"), "\(token.advice)")
    }

    @Test("a stop for tokens of the other environment names the other endpoint; for another app's tokens, the topic")
    func environmentAndTopic() throws {
        let why = "BadDeviceToken for every token of topic com.wrong.app (20 answers, none accepted)"
        let production = try #require(hint.line(forStop: why))
        #expect(
            production.contains("the production environment")
                && production.contains("none of them is listed for pruning"))
        #expect(production.hasSuffix("--topic com.wrong.app --endpoint development"), "\(production)")
        var development = hint
        development.environment = .development
        development.arguments += ["--endpoint", "development"]
        #expect(development.line(forStop: why)?.hasSuffix("--topic com.wrong.app --endpoint production") == true)
        var other = hint
        other.environment = nil
        other.arguments += ["--endpoint=https://127.0.0.1:2197"]
        #expect(other.line(forStop: why)?.hasSuffix("--endpoint=YOUR_ENDPOINT") == true)
        let notForTopic = try #require(
            hint.line(
                forStop: "DeviceTokenNotForTopic for every token of topic com.wrong.app (20 answers, none accepted)"))
        #expect(notForTopic.contains("another app") && notForTopic.hasSuffix("--topic YOUR_TOPIC"), "\(notForTopic)")
        #expect(hint.line(forStop: why, failedStart: true)?.contains("then run it again with that endpoint") == true)
    }

    @Test("--cert c.pem --key k.pem, curl's habit, names --cert-key")
    func certificateKeyMixUp() {
        #expect(throws: (any Error).self) {
            _ = try SendCommand.parse(["c.ndjson", "--results", "r", "--cert", "c.pem", "--key", "k.pem"])
        }
        do {
            _ = try SendCommand.parse(["c.ndjson", "--results", "r", "--cert", "c.pem", "--key", "k.pem"])
        } catch {
            let message = SendCommand.message(for: error)
            #expect(message.contains("--cert c.pem --cert-key k.pem"), "\(message)")
        }
    }
}
