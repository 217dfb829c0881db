import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// A stopped campaign's result file reopened to be continued: the lines of records APNs never accepted go, every
/// other line stays as it was, in order, in both result formats.
@Suite("a stopped campaign reopened")
struct StoppedCampaignTests {
    typealias Support = PipelineTestSupport

    static func notification(_ index: Int) throws -> PushNotification {
        PushNotification(
            token: try DeviceToken(parsing: Fixture.token(index)), topic: try Topic(validating: Fixture.topic),
            pushType: .alert, payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8))
    }

    @Test(
        "not_sent, retryable and setting rejections go; delivered, prune, invalid, duplicate and in_doubt stay",
        arguments: ResultFormat.allCases)
    func reopen(format: ResultFormat) throws {
        let directory = try Support.temporaryDirectory()
        let results = directory.appendingPathComponent("r.\(format.rawValue)").path
        let writer = try ResultWriter(
            path: results, format: format, mode: .create, inputFiles: InputFileList(["c.ndjson"]))
        func key(_ line: Int) -> RecordKey { RecordKey(fileIndex: 0, line: line) }
        let lines: [(ResultRecord, kept: Bool)] = [
            (ResultRecord(key: key(1), outcome: .delivered, notification: try Self.notification(1)), true),
            (
                ResultRecord(
                    key: key(2), outcome: .notSent, detail: "campaign stopped", notification: try Self.notification(2)),
                false
            ),
            (
                ResultRecord(
                    key: key(3), outcome: .retryable, status: 403, reason: "InvalidProviderToken",
                    notification: try Self.notification(3)), false
            ),
            (
                ResultRecord(
                    key: key(4), outcome: .prune, token: Fixture.token(4), topic: Fixture.topic, status: 410,
                    reason: "Unregistered", timestamp: 5), true
            ),
            (
                ResultRecord(
                    key: key(5), outcome: .inputError, status: 400, reason: "TopicDisallowed",
                    notification: try Self.notification(5)), false
            ),
            (
                ResultRecord(
                    key: key(6), outcome: .inputError, status: 400, reason: "PayloadTooLarge",
                    notification: try Self.notification(6)), true
            ),
            (ResultRecord(key: key(7), outcome: .inputError, reason: "TokenInvalid", detail: "not hex"), true),
            (ResultRecord(key: key(8), outcome: .inDoubt, notification: try Self.notification(8)), true),
            (ResultRecord(key: key(9), outcome: .duplicate, token: Fixture.token(1), topic: Fixture.topic), true),
        ]
        for (line, _) in lines { try writer.write(line) }
        try writer.flush()
        let removed = try StoppedCampaign.reopen(resultsPath: results, inputs: ["c.ndjson"], format: format)
        #expect(removed == 3)
        let reader = try ResultReader(path: results, inputFiles: InputFileList(["c.ndjson"]))
        var read: [ResultRecord] = []
        while let record = try reader.next() { read.append(record) }
        #expect(read.map(\.key.line) == lines.filter(\.kept).map(\.0.key.line))
        #expect(read.map(\.outcome) == lines.filter(\.kept).map(\.0.outcome))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains("tmp")
        }
        #expect(leftovers.isEmpty)
        #expect(
            try StoppedCampaign.reopen(resultsPath: results, inputs: ["c.ndjson"], format: format) == 0,
            "again: nothing more")
    }
}
