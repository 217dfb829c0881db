import Foundation
import Testing

/// `validate --results` against `send` on the same campaign: both write an invalid record's line through the
/// same `ResultRecord` constructor and the same writer.
@Suite("validate end to end", .serialized)
struct ValidateEndToEndTests {
    @Test("validate --results writes, byte for byte, the input_error lines send writes for the same records")
    func sameLinesAsSend() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let sent = out.file("send.ndjson")
        let checked = out.file("validate.ndjson")
        let campaigns = [Tool.path("samples/campaign.ndjson"), Tool.path("samples/campaign.csv")]
        let template = ["--template", Tool.path("samples/template.json")]
        let send = try Tool.run(["send"] + campaigns + template + ["--results", sent] + mock.clientArguments)
        #expect(send.status == 2, "exit \(send.status): \(send.stderr)")
        _ = try mock.stop()
        let validate = try Tool.run(
            ["validate"] + campaigns + template
                + ["--topic", MockProcess.topic, "--results", checked])
        #expect(validate.status == 2, "exit \(validate.status): \(validate.stderr)")

        let sendLines = Set(try String(contentsOfFile: sent, encoding: .utf8).split(separator: "\n"))
        let validateLines = try String(contentsOfFile: checked, encoding: .utf8).split(separator: "\n")
        #expect(validateLines.count >= 4, "the samples' invalid records, in both files")
        #expect(Set(validateLines.map { $0.contains("\"file\":\"\(campaigns[1])\"") }) == [true, false])
        #expect(validateLines.allSatisfy { $0.contains(#""outcome":"input_error""#) })
        let notWrittenBySend = validateLines.filter { !sendLines.contains($0) }
        #expect(notWrittenBySend.isEmpty, "send wrote no such lines: \(notWrittenBySend)")
    }

    @Test("validate counts every duplicate, in the last partial batch of pairs too, across files and topics")
    func duplicateCounts() throws {
        let out = try TemporaryDirectory()
        // 100 records over 37 tokens: 63 copies. Then a second file repeating 10 of them (10 more), 5 of them on
        // another topic (new pairs), and one invalid record (not a pair at all).
        func line(_ token: Int, topic: String? = nil) -> String {
            let hex = String(repeating: "0", count: 62) + String(format: "%02x", token)
            let member = topic.map { #","topic":"\#($0)""# } ?? ""
            return #"{"token":"\#(hex)"\#(member),"payload":{"aps":{"alert":"hi"}}}"#
        }
        let first = out.file("first.ndjson")
        let second = out.file("second.ndjson")
        try (0..<100).map { line($0 % 37) }.joined(separator: "\n").write(
            toFile: first, atomically: true, encoding: .utf8)
        let more =
            (0..<10).map { line($0) } + (0..<5).map { line($0, topic: "com.example.other") } + [#"{"token":"zz"}"#]
        try more.joined(separator: "\n").write(toFile: second, atomically: true, encoding: .utf8)
        let validate = try Tool.run(["validate", first, second, "--topic", MockProcess.topic])
        #expect(validate.status == 2, "exit \(validate.status): \(validate.stderr)")
        #expect(validate.stderr.contains("116 records: 115 valid, 1 invalid, 73 duplicates"), "\(validate.stderr)")
    }
}
