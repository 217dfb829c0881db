import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

@Suite("Prune list")
struct PruneListTests {
    typealias Support = PipelineTestSupport

    private func prune(_ token: String, _ reason: String, _ timestamp: Int64?, status: Int = 410) -> ResultRecord {
        ResultRecord(
            key: RecordKey(fileIndex: 0, line: 1), outcome: .prune, token: token, status: status, reason: reason,
            timestamp: timestamp)
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
        #expect(
            list.entries.map { [$0.token, $0.reason, $0.timestamp.map(String.init) ?? "-"] } == [
                ["aa", "Unregistered", "300"], ["bb", "BadDeviceToken", "-"], ["ee", "ExpiredToken", "50"],
                ["cc", "DeviceTokenNotForTopic", "-"],
            ])
        #expect(
            list.entries.map { ($0.results as NSString).lastPathComponent } == [
                "two.ndjson", "two.ndjson", "one.csv", "two.ndjson",
            ])
        #expect(list.entries.allSatisfy { $0.campaign == "f" })
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

    static let csvRows: String =
        PruneList.csvHeader
        + "\naa,Unregistered,300,com.a,production,1970-01-01T00:00:00.300Z,c.ndjson,r.ndjson\n"
        + "bb,BadDeviceToken,,com.a,production,,c.ndjson,r.ndjson\n"
    static let ndjsonRows: String =
        #"{"token":"aa","reason":"Unregistered","timestamp":300,"topic":"com.a","environment":"production","timestamp_iso":"1970-01-01T00:00:00.300Z","campaign":"c.ndjson","results":"r.ndjson"}"#
        + "\n"
        + #"{"token":"bb","reason":"BadDeviceToken","topic":"com.a","environment":"production","campaign":"c.ndjson","results":"r.ndjson"}"#
        + "\n"
    static let outputCases: [(PruneList.OutputFormat, String)] = [
        (.text, "aa\nbb\n"), (.csv, csvRows), (.ndjson, ndjsonRows),
    ]

    @Test(
        "text, CSV and NDJSON output: where each token comes from after the first three columns", arguments: outputCases
    )
    func output(format: PruneList.OutputFormat, expected: String) throws {
        let sink = MemoryByteSink()
        let source = (topic: "com.a", environment: "production", campaign: "c.ndjson", results: "r.ndjson")
        try PruneList.write(
            [
                .init(
                    token: "aa", reason: "Unregistered", timestamp: 300, topic: source.topic,
                    environment: source.environment,
                    campaign: source.campaign, results: source.results),
                .init(
                    token: "bb", reason: "BadDeviceToken", timestamp: nil, topic: source.topic,
                    environment: source.environment,
                    campaign: source.campaign, results: source.results),
            ],
            format: format, to: sink
        )
        #expect(sink.text == expected)
    }

    @Test(
        "a token called bad is listed only when its result file has a 200 or 410 of its topic; else held back, or listed with includeUnconfirmed"
    )
    func confirmation() throws {
        let directory = try Support.temporaryDirectory()
        let path = directory.appendingPathComponent("r.ndjson").path
        let writer = try ResultWriter(path: path, format: .ndjson, mode: .create, inputFiles: InputFileList(["f"]))
        func line(
            _ number: Int, _ token: String, _ topic: String, _ outcome: RecordOutcome, _ status: Int, _ reason: String?
        ) -> ResultRecord {
            ResultRecord(
                key: RecordKey(fileIndex: 0, line: number), outcome: outcome, token: token, topic: topic,
                status: status, reason: reason)
        }
        try writer.write(line(1, "b1", "com.a", .prune, 400, "BadDeviceToken"))
        // nothing of com.b delivered: held back
        try writer.write(line(2, "b2", "com.b", .prune, 400, "BadDeviceToken"))
        try writer.write(line(3, "b3", "com.b", .prune, 400, "DeviceTokenNotForTopic"))
        try writer.write(line(4, "d1", "com.a", .delivered, 200, nil))  // confirms com.a, even after the bad line
        try writer.flush()
        var list = PruneList()
        try list.add(resultsAt: path)
        #expect(list.entries.map(\.token) == ["b1"] && list.heldBack == 2)
        var all = PruneList()
        all.includeUnconfirmed = true
        try all.add(resultsAt: path)
        #expect(all.entries.map(\.token) == ["b1", "b2", "b3"] && all.heldBack == 2)
    }

    @Test("CSV cells from users: formulas neutralised as OWASP says, control characters escaped")
    func userCells() {
        let cases: [(String, String)] = [
            ("=1+1", "\"'=1+1\""), ("+1", "\"'+1\""), ("-1", "\"'-1\""), ("@SUM(A1)", "\"'@SUM(A1)\""),
            ("\tx", "\"'\\tx\""), ("\rx", "\"'\\rx\""), ("a\u{1B}[2Jb", "a\\u{1B}[2Jb"), ("com.a", "com.a"),
            ("a,b", "\"a,b\""),
        ]
        for (value, cell) in cases {
            var out: [UInt8] = []
            CSVText.appendUserCell(value, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == cell, "\(value)")
        }
    }

    @Test("times: milliseconds as ISO 8601 to the millisecond; --after's forms")
    func times() {
        #expect(MillisecondTime.iso8601(1_767_225_600_123) == "2026-01-01T00:00:00.123Z")
        #expect(MillisecondTime.parse("1767225600123") == 1_767_225_600_123)
        #expect(MillisecondTime.parse("2026-01-01") == 1_767_225_600_000)
        #expect(MillisecondTime.parse("2026-01-01T00:00:00Z") == 1_767_225_600_000)
        #expect(MillisecondTime.parse("2026-01-01T02:00:00.123+02:00") == 1_767_225_600_123)
        for bad in ["", "yesterday", "2026-01-01T00:00:00", "-5", "1e3", "2026-13-01"] {
            #expect(MillisecondTime.parse(bad) == nil, "\(bad)")
        }
    }
}
