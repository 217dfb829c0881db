import Foundation
import Testing

/// Hostile input end to end: header values HTTP/2 forbids, control characters in what the tool prints, damaged
/// result lines in a replay.
@Suite("hostile input end to end")
struct InputSafetyEndToEndTests {
    /// Whether `text` holds a character a terminal or a line-based reader would act on (newlines excepted).
    static func hasRawControl(_ text: String) -> Bool {
        text.unicodeScalars.contains {
            ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}"
        }
    }

    @Test("validate prints exactly one escaped line per invalid record, whatever the record and file name hold")
    func validateHostileFixture() throws {
        let out = try TemporaryDirectory()
        let campaign = out.file("hostile\n\u{1B}[2J.ndjson")
        try FileManager.default.copyItem(atPath: Tool.path("Tests/Fixtures/pipeline/hostile.ndjson"), toPath: campaign)
        let run = try Tool.run(["validate", campaign, "--topic", "com.example.app"])
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let escapedPath = (out.path as NSString).appendingPathComponent("hostile\\n\\u{1B}[2J.ndjson")
        #expect(lines.count == 12, "\(run.stdout.debugDescription)")
        #expect(
            lines.map { line in Int(line.dropFirst(escapedPath.count + 1).prefix { $0 != ":" }) ?? 0 }
                == [2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14])
        #expect(lines.allSatisfy { $0.hasPrefix(escapedPath + ":") }, "\(run.stdout.debugDescription)")
        #expect(!Self.hasRawControl(run.stdout), "\(run.stdout.debugDescription)")
        #expect(!Self.hasRawControl(run.stderr), "\(run.stderr.debugDescription)")
        #expect(run.stderr.contains("14 records: 2 valid, 12 invalid"), "\(run.stderr)")
        #expect(lines.filter { $0.contains("CollapseIdInvalid") }.count == 3)
    }

    @Test(
        "a command-line default HTTP/2 forbids is a usage error (64) with a clear, escaped message",
        arguments: [
            ["--collapse-id", " promo"], ["--collapse-id", "promo\t"], ["--collapse-id", "pro\u{1B}]0;pwned\u{07}mo"],
            ["--topic", "com.example.app\u{1B}[2J"], ["--topic", " com.example.app"],
            ["--push-type", "alert\r\nforged"],
            ["--priority", "10 "], ["--expiration", " 1"],
        ])
    func forbiddenDefaults(option: [String]) throws {
        let arguments = [
            "validate", Tool.path("Tests/Fixtures/pipeline/campaign.ndjson"), "--topic", "com.example.app",
        ]
        let run = try Tool.run(arguments + option)
        #expect(run.status == 64, "\(option.debugDescription): exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains(option[0]), "the message names the option: \(run.stderr)")
        #expect(!Self.hasRawControl(run.stderr), "\(run.stderr.debugDescription)")
    }

    @Test("replay: damaged result lines each get an input_error line; the good ones are sent")
    func replayDamagedLines() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let token = { (n: Int) in String(repeating: String(format: "%02x", n), count: 32) }
        func line(_ number: Int, _ extra: String) -> String {
            #"{"file":"c.ndjson","line":\#(number),"token":"\#(token(number))","topic":"\#(MockProcess.topic)","outcome":"retryable","#
                + extra + #""payload":{"aps":{"alert":"x"}}}"#
        }
        let damaged = [
            line(1, ""), line(2, #""push_type":"alarm","#), line(3, #""priority":7,"#),
            line(4, #""expiration":"soon","#),
            line(5, #""apns_id":"not-a-uuid","#), "not JSON at all", line(7, #""collapse_id":" promo","#), line(8, ""),
        ]
        let input = out.file("damaged.ndjson")
        try (damaged.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        let results = out.file("replayed.ndjson")
        let run = try Tool.run(["replay", input, "--results", results] + mock.replayArguments)
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        let lines = try Results.read(results)
        #expect(lines.count == 8, "\(lines)")
        var outcomes: [String: String] = [:]
        for line in lines {
            outcomes["\(line["file"] as? String ?? "?"):\(line["line"] as? Int ?? 0)"] = line["outcome"] as? String
        }
        #expect(
            outcomes == [
                "c.ndjson:1": "delivered", "c.ndjson:2": "input_error", "c.ndjson:3": "input_error",
                "c.ndjson:4": "input_error", "c.ndjson:5": "input_error", "\(input):6": "input_error",
                "c.ndjson:7": "input_error", "c.ndjson:8": "delivered",
            ])
        let counters = try mock.stop()
        #expect(counters["requests"] as? Int == 2)
    }
}
