import Testing

@testable import APNSBulkCLI

/// The words a printed `replay` command carries over from the campaign's command: where and as whom it sent,
/// separate or `=` forms, quoted for the shell; nothing else (not the topic, not the files, not the pacing).
@Suite("connection words of a printed replay")
struct ConnectionWordsTests {
    @Test("endpoint, CA file, key, ids, pins and proxy kept in order; the rest left out")
    func kept() {
        let arguments = [
            "send", "c.ndjson", "--results", "r.ndjson", "--endpoint", "https://127.0.0.1:8443",
            "--ca-file=my ca.pem", "--key", "AuthKey.p8", "--key-id", "ABC", "--team-id", "T1",
            "--topic", "com.example.app", "--pin", "p1", "--pin", "p2", "--rate", "50", "--proxy", "http://proxy:3128",
        ]
        #expect(
            ConnectionWords.words(in: arguments) == [
                "--endpoint", "https://127.0.0.1:8443", "--ca-file", "'my ca.pem'", "--key", "AuthKey.p8", "--key-id",
                "ABC",
                "--team-id", "T1", "--pin", "p1", "--pin", "p2", "--proxy", "http://proxy:3128",
            ])
    }

    @Test("nothing from the environment's runs, and nothing after --")
    func none() {
        #expect(ConnectionWords.words(in: ["send", "c.ndjson", "--results", "r.ndjson"]).isEmpty)
        #expect(ConnectionWords.words(in: ["send", "--", "--key", "x"]).isEmpty)
        #expect(ConnectionWords.words(in: ["send", "--key"]).isEmpty, "an option without its value")
    }
}
