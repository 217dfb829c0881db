import APNSCore
import Foundation
import Testing
@testable import APNSPipeline
import PipelineTestSupport

@Suite("Prune list")
struct PruneListTests {
    typealias Support = PipelineTestSupport

    private func prune(_ token: String, _ reason: String, _ timestamp: Int64?, status: Int = 410) -> ResultRecord {
        ResultRecord(key: RecordKey(fileIndex: 0, line: 1), outcome: .prune, token: token, status: status, reason: reason, timestamp: timestamp)
    }

    /// Two result files (one CSV, one NDJSON with a torn last line) with overlapping tokens.
    private func files() throws -> [String] {
        let directory = try Support.temporaryDirectory()
        let first = directory.appendingPathComponent("one.csv").path
        let second = directory.appendingPathComponent("two.ndjson").path
        let a = try ResultWriter(path: first, format: .csv, mode: .create, inputFiles: InputFileList(["f"]))
        try a.write(prune("aa", "Unregistered", 100))
        try a.write(prune("bb", "Unregistered", 500))
        try a.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 2), outcome: .delivered, token: "dd", status: 200))
        try a.write(prune("ee", "ExpiredToken", 50))
        try a.flush()
        let b = try ResultWriter(path: second, format: .ndjson, mode: .create, inputFiles: InputFileList(["f"]))
        try b.write(prune("aa", "Unregistered", 300))
        try b.write(prune("bb", "BadDeviceToken", nil, status: 400))
        try b.write(prune("cc", "DeviceTokenNotForTopic", nil, status: 400))
        try b.write(prune("aa", "Unregistered", 200))
        try b.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 3), outcome: .retryable, token: "ff", status: 503))
        try b.flush()
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: second))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"file":"f","line":9,"token":"zz","outcome":"pru"#.utf8))
        try handle.close()
        return [first, second]
    }

    @Test("dedup across files: an untimed (always dead) entry wins, else the latest timestamp; only prune outcomes")
    func dedup() throws {
        var list = PruneList()
        for path in try files() { try list.add(resultsAt: path) }
        #expect(list.entries == [
            .init(token: "aa", reason: "Unregistered", timestamp: 300),
            .init(token: "bb", reason: "BadDeviceToken", timestamp: nil),
            .init(token: "ee", reason: "ExpiredToken", timestamp: 50),
            .init(token: "cc", reason: "DeviceTokenNotForTopic", timestamp: nil),
        ])
        #expect(list.tornLines.count == 1 && list.tornLines[0].hasSuffix("two.ndjson:6"))
    }

    @Test("the cutoff keeps 410s strictly after it; untimed entries always pass")
    func cutoff() throws {
        var list = PruneList()
        for path in try files() { try list.add(resultsAt: path) }
        #expect(list.entries(after: 300).map(\.token) == ["bb", "cc"])
        #expect(list.entries(after: 299).map(\.token) == ["aa", "bb", "cc"])
        #expect(list.entries(after: nil).count == 4)
    }

    @Test("text, CSV and NDJSON output", arguments: [
        (PruneList.OutputFormat.text, "aa\nbb\n"),
        (.csv, "token,reason,timestamp\naa,Unregistered,300\nbb,BadDeviceToken,\n"),
        (.ndjson, #"{"token":"aa","reason":"Unregistered","timestamp":300}"# + "\n" + #"{"token":"bb","reason":"BadDeviceToken"}"# + "\n"),
    ])
    func output(format: PruneList.OutputFormat, expected: String) throws {
        let sink = MemoryByteSink()
        try PruneList.write(
            [.init(token: "aa", reason: "Unregistered", timestamp: 300), .init(token: "bb", reason: "BadDeviceToken", timestamp: nil)],
            format: format, to: sink
        )
        #expect(sink.text == expected)
    }
}
