import Foundation
import Testing

/// `validate` and `send --push-type liveactivity` with the built executable against `apns-bulk mock
/// --log-accepted`: each record breaking a Live Activity rule ends `input_error` with its own reason, naming the
/// field, and is never sent; the mock accepts exactly the valid ones (docs/APNS.md, "Live Activity payloads").
@Suite("Live Activity checks end to end", .serialized)
struct LiveActivityEndToEndTests {
    static func token(_ number: Int) -> String { String(repeating: "4a", count: 28) + String(format: "%08x", number) }

    /// Line number → (aps, the reason expected; nil for a valid record), plus one valid payload on a topic
    /// without the suffix.
    static let cases: [(aps: String, reason: String?, field: String?)] = [
        (#"{"timestamp":1767225600,"event":"update","content-state":{"score":1}}"#, nil, nil),
        (
            #"{"timestamp":1767225600,"event":"start","content-state":{"score":0},"attributes-type":"Match","attributes":{"team":"A"}}"#,
            nil, nil
        ),
        (#"{"timestamp":1767225600,"event":"end","dismissal-date":1767229200}"#, nil, nil),
        (#"{"event":"update","content-state":{}}"#, "LiveActivityTimestampMissing", "aps.timestamp"),
        (
            #"{"timestamp":"1767225600","event":"update","content-state":{}}"#, "LiveActivityTimestampInvalid",
            "aps.timestamp"
        ),
        (#"{"timestamp":1767225600,"content-state":{}}"#, "LiveActivityEventMissing", "aps.event"),
        (#"{"timestamp":1767225600,"event":"stop","content-state":{}}"#, "LiveActivityEventInvalid", "aps.event"),
        (#"{"timestamp":1767225600,"event":"update"}"#, "LiveActivityContentStateMissing", "aps.content-state"),
        (
            #"{"timestamp":1767225600,"event":"start","content-state":{},"attributes":{}}"#,
            "LiveActivityAttributesTypeMissing", "aps.attributes-type"
        ),
        (
            #"{"timestamp":1767225600,"event":"start","content-state":{},"attributes-type":"Match"}"#,
            "LiveActivityAttributesMissing", "aps.attributes"
        ),
        (
            #"{"timestamp":1767225600,"event":"update","content-state":{},"stale-date":"soon"}"#,
            "LiveActivityStaleDateInvalid", "aps.stale-date"
        ),
        (
            #"{"timestamp":1767225600,"event":"end","dismissal-date":1.5}"#, "LiveActivityDismissalDateInvalid",
            "aps.dismissal-date"
        ),
    ]

    static func campaign(in directory: TemporaryDirectory) throws -> String {
        var lines = cases.enumerated().map { index, item in
            #"{"token":"\#(token(index + 1))","payload":{"aps":\#(item.aps)}}"#
        }
        lines.append(#"{"token":"\#(token(13))","topic":"\#(MockProcess.topic)","payload":{"aps":\#(cases[0].aps)}}"#)
        let path = directory.file("live.ndjson")
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func check(_ lines: [[String: Any]], command: String) {
        // validate writes the invalid records' lines only; send one line per record.
        let invalid = cases.filter { $0.reason != nil }.count + 1
        #expect(lines.count == (command == "send" ? cases.count + 1 : invalid), "\(command)")
        for line in lines {
            let number = line["line"] as? Int ?? 0
            let reason = line["reason"] as? String
            if number == cases.count + 1 {
                #expect(reason == "TopicSuffixMissing", "\(command) line \(number)")
                continue
            }
            guard number >= 1, number <= cases.count else {
                Issue.record("\(command): unexpected line \(number)")
                continue
            }
            let expected = cases[number - 1]
            if let wanted = expected.reason {
                #expect(line["outcome"] as? String == "input_error", "\(command) line \(number)")
                #expect(reason == wanted, "\(command) line \(number)")
                #expect(line["status"] == nil && (line["attempts"] as? Int ?? 0) == 0, "\(command) line \(number) sent")
                #expect((line["detail"] as? String ?? "").contains(expected.field ?? "?"), "\(command) line \(number)")
            } else if command == "send" {
                #expect(line["outcome"] as? String == "delivered", "line \(number): \(line)")
            }
        }
    }

    @Test(
        "validate and send: each broken rule its own input_error reason naming the field, never sent; the mock accepts only the valid records"
    )
    func validateAndSend() throws {
        let directory = try TemporaryDirectory()
        let campaign = try Self.campaign(in: directory)
        let live = ["--push-type", "liveactivity"]

        let checked = directory.file("validate.ndjson")
        let validate = try Tool.run(["validate", campaign, "--topic", MockProcess.topic, "--results", checked] + live)
        #expect(validate.status == 2, "exit \(validate.status): \(validate.stderr)")
        Self.check(try Results.read(checked), command: "validate")

        let accepted = directory.file("accepted.ndjson")
        let mock = try MockProcess(["--log-accepted", accepted])
        let results = directory.file("send.ndjson")
        let sent = try Tool.run(["send", campaign, "--results", results] + live + mock.clientArguments)
        #expect(sent.status == 2, "exit \(sent.status): \(sent.stderr)")
        _ = try mock.stop()
        Self.check(try Results.read(results), command: "send")
        let log = try Results.read(accepted)
        #expect(Set(log.compactMap { $0["token"] as? String }) == Set((1...3).map(Self.token)))
        #expect(log.count == 3, "accepted once each")
        #expect(Set(log.compactMap { $0["topic"] as? String }) == [MockProcess.topic + ".push-type.liveactivity"])
    }
}
