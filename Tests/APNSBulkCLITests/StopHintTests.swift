import ArgumentParser
import Testing
@testable import APNSBulkCLI

/// What a stopped campaign tells its user to do, and the `--cert … --key …` mix-up named with its fix.
@Suite("stop hints and credential messages")
struct StopHintTests {
    let hint = StopHint(keyID: "ABC123DEFG", teamID: "DEF123GHIJ", topic: "com.wrong.app",
                        endpoint: "https://api.push.apple.com:443", resultsPath: "out/spring sale.ndjson")

    @Test("credentials, topic, push type and certificate stops each name what was sent and the command that finishes")
    func lines() throws {
        let token = try #require(hint.line(forStop: "InvalidProviderToken on 5 requests in a row"))
        #expect(token.contains("--key-id ABC123DEFG and --team-id DEF123GHIJ") && token.contains("App Store Connect"))
        #expect(token.contains("apns-bulk replay 'out/spring sale.ndjson' --results <new file>"))
        let topic = try #require(hint.line(forStop: "TopicDisallowed on 5 requests in a row"))
        #expect(topic.contains("com.wrong.app") && topic.contains("--topic <bundle id>") && topic.contains("DEF123GHIJ"))
        #expect(hint.line(forStop: "UnrelatedKeyIdInToken on 5 requests in a row")?.contains("--endpoint") == true)
        #expect(hint.line(forStop: "InvalidPushType on 5 requests in a row")?.contains("--push-type") == true)
        #expect(hint.line(forStop: "BadCertificateEnvironment on 5 requests in a row")?.contains("environment") == true)
        #expect(hint.line(forStop: "transport failed: connect refused") == nil)
    }

    @Test("--cert c.pem --key k.pem, curl's habit, names --cert-key")
    func certificateKeyMixUp() {
        #expect(throws: (any Error).self) { _ = try SendCommand.parse(["c.ndjson", "--results", "r", "--cert", "c.pem", "--key", "k.pem"]) }
        do {
            _ = try SendCommand.parse(["c.ndjson", "--results", "r", "--cert", "c.pem", "--key", "k.pem"])
        } catch {
            let message = SendCommand.message(for: error)
            #expect(message.contains("--cert c.pem --cert-key k.pem"), "\(message)")
        }
    }
}
