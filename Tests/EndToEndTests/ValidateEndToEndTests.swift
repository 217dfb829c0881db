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
        let validate = try Tool.run(["validate"] + campaigns + template
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
}
