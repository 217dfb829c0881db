import APNSCore
import PipelineTestSupport
import Testing

@testable import APNSPipeline

@Suite("Input file list: the writer turns file indexes into paths, the reader turns them back")
struct InputFileListTests {
    @Test("a path given twice keeps its first index; an index not listed is written #index")
    func lookups() {
        var files = InputFileList(["a.ndjson", "b.csv", "a.ndjson"])
        #expect(files.paths == ["a.ndjson", "b.csv", "a.ndjson"])
        #expect(files.index(of: "a.ndjson") == 0 && files.index(of: "b.csv") == 1 && files.index(of: "c") == nil)
        #expect(files.path(at: 2) == "a.ndjson" && files.path(at: 7) == "#7")
        #expect(files.index(adding: "c") == 3 && files.index(adding: "b.csv") == 1)
        #expect(files.paths == ["a.ndjson", "b.csv", "a.ndjson", "c"])
    }

    @Test(
        "results keyed by index come back keyed by the reader's list, new paths appended",
        arguments: ResultFormat.allCases)
    func writeThenRead(format: ResultFormat) throws {
        let sink = MemoryByteSink()
        let writer = ResultWriter(
            sink: sink, format: format, inputFiles: InputFileList(["first.ndjson", "second.csv"]))
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 4), outcome: .delivered, attempts: 1))
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 1, line: 9), outcome: .notSent))
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 5, line: 2), outcome: .notSent))
        try writer.flush()
        #expect(sink.text.contains("second.csv") && sink.text.contains("#5"))

        let reader = try ResultReader(
            source: MemoryByteSource(sink.bytes), name: "r", inputFiles: InputFileList(["second.csv"]))
        var keys: [RecordKey] = []
        while let record = try reader.next() { keys.append(record.key) }
        #expect(
            keys == [
                RecordKey(fileIndex: 1, line: 4), RecordKey(fileIndex: 0, line: 9), RecordKey(fileIndex: 2, line: 2),
            ])
        #expect(reader.inputFiles.paths == ["second.csv", "first.ndjson", "#5"])
    }
}
