import APNSCore
import Foundation
import Glibc
import Testing

@testable import APNSPipeline

/// The campaign-wide checks made before a run creates anything: no topic anywhere, whatever the records before the
/// first one with a topic hold, with the records read ahead handed out first to `nextRecord` and `checkRecords`;
/// and the outputs (`OutputPathCheck`).
@Suite("start checks")
struct StartChecksTests {
    typealias Support = PipelineTestSupport

    static let noTopic = #"{"token":"\#(Support.token(1))","payload":{"aps":{"alert":"x"}}}"#
    static let withTopic =
        #"{"token":"\#(Support.token(2))","topic":"com.example.app","payload":{"aps":{"alert":"x"}}}"#

    func reader(_ text: String, in directory: URL, keepsPayloads: Bool = true) throws -> CampaignReader {
        let path = directory.appendingPathComponent("c.ndjson").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        var options = CampaignReaderOptions(defaults: CampaignDefaults())
        options.keepsPayloads = keepsPayloads
        return CampaignReader(inputs: [CampaignInput(path: path)], options: options)
    }

    @Test("no topic anywhere is refused with malformed and invalid lines first, and past the read-ahead")
    func noTopicWhateverComesFirst() throws {
        let directory = try Support.temporaryDirectory()
        let first = "not json\n" + #"{"token":"xyz","payload":{}}"# + "\n"
        for text in [first + Self.noTopic + "\n", first + String(repeating: Self.noTopic + "\n", count: 600)] {
            let error = #expect(throws: PipelineError.self) { try reader(text, in: directory).prepareToStart() }
            #expect(
                error?.kind == .campaignSettingMissing && error?.detail.contains("no record") == true,
                "\(String(describing: error))")
        }
    }

    @Test("a topic past the read-ahead is found; every record is still handed out once, in order")
    func topicPastTheReadAhead() throws {
        let directory = try Support.temporaryDirectory()
        let text = "not json\n" + String(repeating: Self.noTopic + "\n", count: 300) + Self.withTopic + "\n"
        let sending = try reader(text, in: directory)
        try sending.prepareToStart()
        var lines: [Int] = []
        while let record = try sending.nextRecord() { lines.append(record.key.line) }
        #expect(lines == Array(1...302))

        // validate's way: the records read ahead come first, the rest after them.
        let checking = try reader(text, in: directory, keepsPayloads: false)
        try checking.prepareToStart()
        var checked: [Int] = []
        var valid = 0
        try checking.checkRecords(
            valid: { key, _, _, _ in
                checked.append(key.line)
                valid += 1
            }, invalid: { key, _, _, _ in checked.append(key.line) })
        #expect(checked == Array(1...302) && valid == 1)
    }

    @Test("outputs: an input by another name, a file that is not a result file, a missing folder, a directory")
    func outputs() throws {
        let directory = try Support.temporaryDirectory()
        let campaign = directory.appendingPathComponent("c.ndjson").path
        try Data((Self.withTopic + "\n").utf8).write(to: URL(fileURLWithPath: campaign))
        let linked = directory.appendingPathComponent("linked.ndjson").path
        #expect(link(campaign, linked) == 0)
        let asInput = #expect(throws: PipelineError.self) {
            try OutputPathCheck.checkResultFile(linked, reading: [campaign])
        }
        #expect(
            asInput?.kind == .outputInvalid && asInput?.detail.contains("--results \(linked): it is the input") == true)
        let notResults = #expect(throws: PipelineError.self) {
            try OutputPathCheck.checkResultFile(campaign, reading: [])
        }
        #expect(notResults?.kind == .outputInvalid && notResults?.detail.contains("--overwrite") == false)

        let results = directory.appendingPathComponent("r.ndjson").path
        let writer = try ResultWriter(
            path: results, format: .ndjson, mode: .create, inputFiles: InputFileList([campaign]))
        try writer.write(
            ResultRecord(
                key: RecordKey(fileIndex: 0, line: 1), outcome: .inputError, token: nil, topic: nil,
                reason: "RecordInvalidJson", detail: "x"))
        try writer.flush()
        try OutputPathCheck.checkResultFile(results, reading: [campaign])  // a result file: RunStart decides
        try OutputPathCheck.checkResultFile(directory.appendingPathComponent("new.ndjson").path, reading: [campaign])

        let missing = directory.appendingPathComponent("missing/s.json").path
        let folder = #expect(throws: PipelineError.self) {
            try OutputPathCheck.checkOutput(missing, option: "--summary", reading: [])
        }
        #expect(folder?.kind == .openFailed && folder?.detail.contains("--summary \(missing): the folder") == true)
        let isDirectory = #expect(throws: PipelineError.self) {
            try OutputPathCheck.checkOutput(directory.path, option: "--report", reading: [])
        }
        #expect(isDirectory?.kind == .outputInvalid)
        try OutputPathCheck.checkOutput("/dev/null", option: "--metrics", reading: [])
        let twice = #expect(throws: PipelineError.self) {
            try OutputPathCheck.checkDistinct([("--summary", "s.json"), ("--report", "s.json")])
        }
        #expect(twice?.detail.contains("--report s.json: --summary writes the same file") == true)

        // A write that fails all the same names the path given, not the new file made beside it.
        let metrics = #expect(throws: PipelineError.self) { try CampaignMetrics.write("x 1\n", to: missing) }
        #expect(
            metrics?.detail.hasPrefix(missing + ":") == true && metrics?.detail.contains(".tmp-") == false,
            "\(String(describing: metrics))")
    }
}
