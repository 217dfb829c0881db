import APNSCore
import Foundation
import Glibc
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

    @Test("a FIFO (or /dev/null) given as the log is written in place and stays what it is")
    func fifoStaysAFIFO() throws {
        let path = Self.temporaryPath()
        #expect(mkfifo(path, 0o600) == 0)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let reader = open(path, O_RDONLY | O_NONBLOCK)  // the audit reading the pipe
        #expect(reader >= 0)
        defer { close(reader) }
        let fixture = try MockServerFixture { $0.acceptedLogPath = path }
        #expect(try fixture.curl().status == 200)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(reader, &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).hasPrefix(#"{"token":""#))
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
        #expect(line["answered"] as? Bool == true)

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
        let result = try fixture.h2load(
            requests: 40, clients: 1, streams: 40, urls: tokens.map { fixture.url(token: $0) })
        #expect(result.status("2xx") == 40, "\(result.output)")
        let logged = try Self.lines(path).compactMap { $0["token"] as? String }
        #expect(logged.sorted() == tokens.sorted())
        #expect(fixture.server.counters().byStatus[200] == 40)
    }

    @Test("latency, then the connection drops: the held-back 200 is logged anyway, marked answered false")
    func heldBackAnswerOfDroppedConnection() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fixture = try MockServerFixture {
            $0.acceptedLogPath = path
            $0.faults = try FaultPlan(parsing: ["latency=300ms", "drop=after:2"])
        }
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        let first = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[first] != nil && client.session.availableStreamSlots > 1 }
        let heldToken = String(repeating: "cd", count: 32)
        let held = try client.send(token: heldToken, authorization: fixture.authorization, flush: false)
        let dropped = try client.send(authorization: fixture.authorization)
        client.spin { client.isClosed }
        #expect(client.answers[first]?.status == 200)
        #expect(client.answers[held] == nil, "the held-back answer never left")
        #expect(client.answers[dropped] == nil)

        let lines = try Self.lines(path)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?["token"] as? String == MockServerFixture.goodToken)
        #expect(lines.first?["answered"] as? Bool == true)
        let heldLine = try #require(lines.last)
        #expect(heldLine["token"] as? String == heldToken)
        #expect(heldLine["answered"] as? Bool == false)
        #expect(heldLine["stream"] as? Int == 3)
        #expect((heldLine["apns_id"] as? String)?.count == 36)
    }

    @Test("a line is marked unanswered by its last field only")
    func unansweredMark() throws {
        let request = MockTestSupport.request(streamID: 5, headers: [("apns-topic", "com.example.app")])
        let line = MockAcceptedLog.line(
            for: request, apnsID: try APNSID(parsing: "123e4567-e89b-12d3-a456-426614174000"), connection: 2)
        let text = String(decoding: MockAcceptedLog.unanswered(line), as: UTF8.self)
        #expect(text.hasSuffix(#","connection":2,"stream":5,"answered":false}"# + "\n"), "\(text)")
    }

    @Test("in development mode a line carries the answer's apns-unique-id after apns_id; otherwise none")
    func uniqueID() throws {
        let request = MockTestSupport.request(streamID: 7, headers: [("apns-topic", "com.example.app")])
        let apnsID = try APNSID(parsing: "123e4567-e89b-12d3-a456-426614174000")
        let uniqueID = try APNSID(parsing: "5b0a7c1e-3f0d-4e8a-9c1b-2d3e4f5a6b7c")
        let with = String(
            decoding: MockAcceptedLog.line(for: request, apnsID: apnsID, uniqueID: uniqueID, connection: 1),
            as: UTF8.self)
        #expect(
            with.contains(
                #""apns_id":"123e4567-e89b-12d3-a456-426614174000","apns_unique_id":"5b0a7c1e-3f0d-4e8a-9c1b-2d3e4f5a6b7c","connection":1"#
            ), "\(with)")
        let without = String(decoding: MockAcceptedLog.line(for: request, apnsID: apnsID, connection: 1), as: UTF8.self)
        #expect(!without.contains("apns_unique_id"))
    }

    @Test("a log that cannot be created stops the server from starting")
    func unwritableLog() {
        var configuration = MockConfiguration()
        configuration.acceptedLogPath = "/nonexistent-directory/accepted.ndjson"
        #expect(throws: MockServerError.self) { try MockServer.start(configuration: configuration) }
    }
}
