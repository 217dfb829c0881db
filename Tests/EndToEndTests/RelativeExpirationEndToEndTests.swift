import Foundation
import Testing

/// Relative expiration (`--expiration 1h`, `"expiration":"30m"`) against `apns-bulk mock --log-accepted`, whose
/// lines carry the `apns-expiration` header as received: the header is the epoch of the record's first send plus
/// the duration, and a retry, in the run or by `replay`, sends that first value (docs/RUNNING-AGAIN.md).
@Suite("relative expiration end to end", .serialized)
struct RelativeExpirationEndToEndTests {
    static func token(_ number: Int) -> String { String(repeating: "e4", count: 28) + String(format: "%08x", number) }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    private static func campaign(in directory: TemporaryDirectory, _ lines: [String]) throws -> String {
        let path = directory.file("campaign.ndjson")
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The mock's accepted lines: expiration by token (nil: no header).
    private static func acceptedExpirations(_ path: String) throws -> [String: Int64?] {
        var found: [String: Int64?] = [:]
        for line in try Results.read(path) {
            guard let token = line["token"] as? String else { continue }
            found[token] = (line["expiration"] as? NSNumber)?.int64Value
        }
        return found
    }

    @Test("send --expiration 1h: every accepted request carries the epoch of its send plus an hour")
    func optionDefault() throws {
        let directory = try TemporaryDirectory()
        let campaign = try Self.campaign(
            in: directory,
            (1...6).map {
                #"{"token":"\#(Self.token($0))","payload":{"aps":{"alert":"hi"}}}"#
            })
        let accepted = directory.file("accepted.ndjson")
        let mock = try MockProcess(["--log-accepted", accepted])
        let before = Self.now()
        let sent = try Tool.run(
            ["send", campaign, "--results", directory.file("results.ndjson"), "--expiration", "1h"]
                + mock.clientArguments)
        let after = Self.now()
        _ = try mock.stop()
        #expect(sent.status == 0, "exit \(sent.status): \(sent.stderr)")
        let expirations = try Self.acceptedExpirations(accepted)
        #expect(expirations.count == 6)
        for (token, expiration) in expirations {
            let value = try #require(expiration, "\(token): no apns-expiration header")
            #expect(
                value >= before + 3600 && value <= after + 3600, "\(token): \(value), sent within [\(before), \(after)]"
            )
        }
    }

    @Test(
        #"a record's "expiration":"30m" is relative, an epoch is sent as written, a record without one uses the default"#
    )
    func perRecord() throws {
        let directory = try TemporaryDirectory()
        let campaign = try Self.campaign(
            in: directory,
            [
                #"{"token":"\#(Self.token(1))","expiration":"30m","payload":{"aps":{"alert":"hi"}}}"#,
                #"{"token":"\#(Self.token(2))","expiration":1767225600,"payload":{"aps":{"alert":"hi"}}}"#,
                #"{"token":"\#(Self.token(3))","expiration":"0","payload":{"aps":{"alert":"hi"}}}"#,
                #"{"token":"\#(Self.token(4))","payload":{"aps":{"alert":"hi"}}}"#,
                #"{"token":"\#(Self.token(5))","expiration":"1h30m","payload":{"aps":{"alert":"hi"}}}"#,
            ])
        let accepted = directory.file("accepted.ndjson")
        let mock = try MockProcess(["--log-accepted", accepted])
        let before = Self.now()
        let sent = try Tool.run(
            ["send", campaign, "--results", directory.file("results.ndjson"), "--expiration", "2d"]
                + mock.clientArguments)
        let after = Self.now()
        _ = try mock.stop()
        #expect(sent.status == 0, "exit \(sent.status): \(sent.stderr)")
        let expirations = try Self.acceptedExpirations(accepted)
        #expect(expirations.count == 5)
        func within(_ token: String, _ seconds: Int64) {
            guard let value = expirations[token] ?? nil else {
                Issue.record("\(token): no apns-expiration")
                return
            }
            #expect(value >= before + seconds && value <= after + seconds, "\(token): \(value)")
        }
        within(Self.token(1), 1_800)
        #expect(expirations[Self.token(2)] == 1_767_225_600)
        #expect(expirations[Self.token(3)] == 0)
        within(Self.token(4), 2 * 86_400)
        within(Self.token(5), 5_400)
    }

    @Test("a CSV expiration column takes durations too")
    func csvColumn() throws {
        let directory = try TemporaryDirectory()
        let campaign = directory.file("campaign.csv")
        try "token,expiration\n\(Self.token(1)),7d\n\(Self.token(2)),1767225600\n"
            .write(toFile: campaign, atomically: true, encoding: .utf8)
        let template = directory.file("alert.json")
        try #"{"aps":{"alert":"hi"}}"#.write(toFile: template, atomically: true, encoding: .utf8)
        let accepted = directory.file("accepted.ndjson")
        let mock = try MockProcess(["--log-accepted", accepted])
        let before = Self.now()
        let sent = try Tool.run(
            ["send", campaign, "--template", template, "--results", directory.file("results.ndjson")]
                + mock.clientArguments)
        let after = Self.now()
        _ = try mock.stop()
        #expect(sent.status == 0, "exit \(sent.status): \(sent.stderr)")
        let expirations = try Self.acceptedExpirations(accepted)
        let week = try #require(expirations[Self.token(1)] ?? nil)
        #expect(week >= before + 7 * 86_400 && week <= after + 7 * 86_400, "\(week)")
        #expect(expirations[Self.token(2)] == 1_767_225_600)
    }

    @Test("retries forced by the mock keep the first value; the retryable line carries it and replay sends it")
    func retriesAndReplayKeepTheFirstValue() throws {
        let directory = try TemporaryDirectory()
        let campaign = try Self.campaign(
            in: directory,
            [
                #"{"token":"\#(Self.token(1))","payload":{"aps":{"alert":"hi"}}}"#
            ])
        let results = directory.file("results.ndjson")
        let failing = try MockProcess(["--fault", "500=every:1"])
        let before = Self.now()
        // Back-off 0.5 s, 1 s, 2 s: the fourth try leaves 3.5 s after the first.
        let sent = try Tool.run(
            ["send", campaign, "--results", results, "--expiration", "1h", "--max-attempts", "4"]
                + failing.clientArguments)
        let after = Self.now()
        _ = try failing.stop()
        #expect(sent.status == 3, "exit \(sent.status): \(sent.stderr)")
        let line = try #require(try Results.read(results).first)
        #expect(line["outcome"] as? String == "retryable")
        #expect(line["attempts"] as? Int == 4)
        let first = try #require((line["expiration"] as? NSNumber)?.int64Value, "the line carries the epoch: \(line)")
        #expect(first >= before + 3600, "\(first)")
        // Resolved again at the last try, it would be at least `after` + 3600 - 1.
        #expect(first <= after + 3600 - 2, "\(first) is not the first send's value (run ended at \(after))")

        let accepted = directory.file("accepted.ndjson")
        let healthy = try MockProcess(["--log-accepted", accepted])
        let replayed = try Tool.run(
            ["replay", results, "--results", directory.file("replayed.ndjson")] + healthy.replayArguments)
        _ = try healthy.stop()
        #expect(replayed.status == 0, "exit \(replayed.status): \(replayed.stderr)")
        #expect(try Self.acceptedExpirations(accepted) == [Self.token(1): first], "replay sends the first value")
    }

    @Test("a bad value names the option or field and the accepted forms")
    func refused() throws {
        let directory = try TemporaryDirectory()
        let campaign = try Self.campaign(
            in: directory,
            [
                #"{"token":"\#(Self.token(1))","expiration":"soon","payload":{"aps":{"alert":"hi"}}}"#
            ])
        let option = try Tool.run(
            [
                "send", campaign, "--results", directory.file("r1.ndjson"), "--expiration", "1y", "--endpoint",
                "https://127.0.0.1:9", "--key", MockProcess.keyFile, "--key-id", MockProcess.keyID,
                "--team-id", MockProcess.teamID, "--topic", MockProcess.topic,
            ])
        #expect(option.status == 64, "exit \(option.status): \(option.stderr)")
        #expect(option.stderr.contains("--expiration"), "\(option.stderr)")
        #expect(option.stderr.contains("epoch seconds, 0, or a duration like 30m, 24h, 7d"), "\(option.stderr)")

        let validated = try Tool.run(["validate", campaign, "--topic", MockProcess.topic])
        #expect(validated.status != 0)
        #expect(
            (validated.stdout + validated.stderr).contains("a duration like 30m, 24h, 7d"),
            "\(validated.stdout)\(validated.stderr)")
    }
}
