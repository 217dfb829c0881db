import APNSCore
import Testing

@testable import APNSPipeline

/// A relative expiration is resolved once, at a record's first send, and every retry sends that first value.
@Suite("Dispatcher: relative expiration")
struct RelativeExpirationDispatchTests {
    private static func record(_ line: Int, token: String, expiration: ExpirationSetting) throws -> CampaignRecord {
        let notification = PushNotification(
            token: try DeviceToken(parsing: token), topic: try Topic(validating: Fixture.topic), pushType: .alert,
            expiration: expiration, payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
        return CampaignRecord(key: RecordKey(fileIndex: 0, line: line), content: .notification(notification))
    }

    @Test("1h is resolved at the first send; retries seconds later send the same epoch, and the line carries it")
    func retriesKeepTheFirstValue() throws {
        var configuration = DispatcherConfiguration()
        configuration.retry = ExponentialBackoff(base: 5, cap: 20, maximumAttempts: 3)
        let hour = try #require(DurationText(parsing: "1h"))
        let run = DispatchRun(
            records: [try Self.record(1, token: Fixture.token(1), expiration: .relative(hour))],
            configuration: configuration
        ) { _, _ in Fixture.rejected(500, .internalServerError) }
        _ = try #require(run.run())
        #expect(run.scheduler.now >= 5, "the retries went out later on the clock")
        #expect(run.transport.expirationsSent == [1_800_003_600, 1_800_003_600, 1_800_003_600])
        let result = try #require(run.sink.results.first)
        #expect(result.outcome == .retryable)
        #expect(result.expiration == .resolved(epoch: 1_800_003_600, after: 3_600))
        #expect(
            try result.replayNotification().expiration?.epochSeconds == 1_800_003_600, "replay sends the first value")
    }

    @Test("each record is resolved at its own first send; an absolute expiration goes out as written")
    func eachRecordAtItsOwnSend() throws {
        let minutes = try #require(DurationText(parsing: "30m"))
        let run = DispatchRun(
            records: [
                try Self.record(1, token: Fixture.token(1), expiration: .relative(minutes)),
                try Self.record(2, token: Fixture.token(2), expiration: .absolute(try Expiration(epochSeconds: 7))),
            ],
            capacity: 1
        ) { _, _ in Fixture.ok() }
        run.scheduler.epochAtStart = 1_700_000_000
        run.transport.latency = 2  // the second record goes out two seconds after the first
        _ = try #require(run.run())
        #expect(run.transport.expirationsSent == [1_700_001_800, 7])
    }

    @Test("a pending send that keeps the resolved expiration still fits in 128 bytes")
    func pendingSendSize() {
        #expect(MemoryLayout<PendingSend>.size <= 128)
    }

    @Test("the sent digest covers the duration: the record read again before its send matches the one journaled")
    func digest() throws {
        func notification(_ expiration: ExpirationSetting?) throws -> PushNotification {
            PushNotification(
                token: try DeviceToken(parsing: Fixture.token(1)), topic: try Topic(validating: Fixture.topic),
                pushType: .alert, expiration: expiration, payload: Array(#"{"aps":{}}"#.utf8))
        }
        let relative = try ExpirationSetting(parsing: "1h")
        let resolved = relative.resolved(atEpoch: 1_800_000_000)
        #expect(SentDigest.of(try notification(relative)) == SentDigest.of(try notification(resolved)))
        #expect(
            SentDigest.of(try notification(relative))
                != SentDigest.of(try notification(try ExpirationSetting(parsing: "2h"))))
        #expect(
            SentDigest.of(try notification(resolved))
                != SentDigest.of(try notification(.absolute(try Expiration(epochSeconds: 1_800_003_600)))))
        #expect(SentDigest.of(try notification(relative)) != SentDigest.of(try notification(nil)))
    }

    @Test("a result line writes a resolved expiration as its epoch and one never sent as its duration; both read back")
    func resultLines() throws {
        let token = Fixture.token(1)
        let hour = try #require(DurationText(parsing: "90m"))
        for (setting, written) in [
            (ExpirationSetting.relative(hour), #""expiration":"1h30m""#),
            (ExpirationSetting.relative(hour).resolved(atEpoch: 1_000), #""expiration":6400"#),
        ] {
            let notification = PushNotification(
                token: try DeviceToken(parsing: token), topic: try Topic(validating: Fixture.topic), pushType: .alert,
                expiration: setting, payload: Array(#"{"aps":{}}"#.utf8))
            let line = ResultRecord(
                key: RecordKey(fileIndex: 0, line: 1), outcome: .notSent, notification: notification)
            var out: [UInt8] = []
            line.appendNDJSON(file: "c.ndjson", to: &out)
            let text = String(decoding: out, as: UTF8.self)
            #expect(text.contains(written), "\(text)")
            var files = InputFileList(["c.ndjson"])
            let read = try ResultRecord(ndjson: out, range: 0..<(out.count - 1), inputFiles: &files)
            #expect(read.expiration?.description == setting.description)
        }
    }
}
