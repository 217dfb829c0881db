import APNSCore
import Foundation
import Testing
@testable import APNSMock

/// `--log-accepted`: one line per notification answered 200, on disk before the client can see the answer.
@Suite("Mock accepted-notification log")
struct MockAcceptedLogTests {
    private static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("accepted-\(UUID().uuidString).ndjson").path
    }

    private static func lines(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("a 200 is logged with token, topic and apns-id before curl sees it; rejections are not logged")
    func logsAcceptedOnly() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fixture = try MockServerFixture { $0.acceptedLogPath = path }
        #expect(try Self.lines(path).isEmpty, "the log starts empty")

        let accepted = try fixture.curl()
        #expect(accepted.status == 200)
        // Read as soon as curl has the answer: the line must already be there, not buffered.
        let afterFirst = try Self.lines(path)
        #expect(afterFirst.count == 1)
        let line = try #require(afterFirst.first)
        #expect(line["token"] as? String == MockServerFixture.goodToken)
        #expect(line["topic"] as? String == MockServerFixture.topic)
        #expect(line["apns_id"] as? String == accepted.headers["apns-id"])

        let rejected = try fixture.curl(token: MockServerFixture.deadToken)
        #expect(rejected.status == 410)
        #expect(try Self.lines(path).count == 1, "a 410 is not an accepted notification")
    }

    @Test("with injected latency each delayed 200 is logged under its own token")
    func delayedAnswers() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fixture = try MockServerFixture {
            $0.acceptedLogPath = path
            $0.faults = try FaultPlan(parsing: ["latency=1..4ms"])
        }
        let tokens = (1...40).map { String(format: "%064x", $0 * 7919) }
        let result = try fixture.h2load(requests: 40, clients: 1, streams: 40, urls: tokens.map { fixture.url(token: $0) })
        #expect(result.status("2xx") == 40, "\(result.output)")
        let logged = try Self.lines(path).compactMap { $0["token"] as? String }
        #expect(logged.sorted() == tokens.sorted())
        #expect(fixture.server.counters().byStatus[200] == 40)
    }

    @Test("a log that cannot be created stops the server from starting")
    func unwritableLog() {
        var configuration = MockConfiguration()
        configuration.acceptedLogPath = "/nonexistent-directory/accepted.ndjson"
        #expect(throws: MockServerError.self) { try MockServer.start(configuration: configuration) }
    }
}
