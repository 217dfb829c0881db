import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

@Suite("Resume state from results and journal")
struct ResumeStateTests {
    typealias Support = PipelineTestSupport

    /// Writes a crashed run's files: results (with a torn last line) and journal (with a torn last line).
    private func crashedRun(in directory: URL) throws -> (results: String, journal: String) {
        let results = directory.appendingPathComponent("out.ndjson").path
        let journalPath = SendJournal.path(forResults: results)
        let writer = try ResultWriter(
            path: results, format: .ndjson, mode: .create, inputFiles: InputFileList(["a.ndjson", "b.ndjson"]))
        let journal = try SendJournal(path: journalPath, mode: .create)
        for line in 1...6 { journal.recordSent(fileIndex: 0, line: line) }
        journal.recordRetryable(fileIndex: 0, line: 4)
        journal.recordRetryable(fileIndex: 0, line: 5)
        journal.recordSent(fileIndex: 0, line: 5)
        journal.recordRetryable(fileIndex: 1, line: 2)
        try journal.flush()
        try writer.write(
            ResultRecord(key: RecordKey(fileIndex: 0, line: 1), outcome: .delivered, status: 200, attempts: 1))
        try writer.write(
            ResultRecord(key: RecordKey(fileIndex: 0, line: 2), outcome: .retryable, status: 503, attempts: 3))
        try writer.write(
            ResultRecord(key: RecordKey(fileIndex: 1, line: 1), outcome: .inputError, reason: "TokenOddLength"))
        try writer.flush()
        // kill -9 in the middle of writing a:6's result and the journal's next line.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: results))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"file":"a.ndjson","line":6,"outcome":"deliv"#.utf8))
        try handle.close()
        let journalHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: journalPath))
        try journalHandle.seekToEnd()
        try journalHandle.write(contentsOf: Data("s 1 3".utf8))
        try journalHandle.close()
        return (results, journalPath)
    }

    @Test("done, in doubt, safe to resend and never sent, with torn last lines in both files")
    func classification() throws {
        let directory = try Support.temporaryDirectory()
        let (results, journal) = try crashedRun(in: directory)
        let state = try ResumeState(resultsPath: results, journalPath: journal, inputs: ["a.ndjson", "b.ndjson"])
        let expected: [(Int, Int, ResumeStatus)] = [
            (0, 1, .finished), (0, 2, .finished), (0, 3, .inDoubt), (0, 4, .resend), (0, 5, .inDoubt),
            (0, 6, .inDoubt), (0, 7, .fresh), (1, 1, .finished), (1, 2, .resend), (1, 3, .fresh),
        ]
        for (file, line, status) in expected {
            #expect(state.status(RecordKey(fileIndex: file, line: line)) == status, "\(file):\(line)")
        }
        #expect(state.status(RecordKey(fileIndex: 0, line: 4)) == .resend)
        #expect(state.finishedCount == 3)
        #expect(state.tornResultLine == 4)
        #expect(state.tornJournalLine == 11)
    }

    @Test("reopening after the crash cuts the torn lines, and the resumed lines read cleanly")
    func reopen() throws {
        let directory = try Support.temporaryDirectory()
        let (results, journalPath) = try crashedRun(in: directory)
        let writer = try ResultWriter(
            path: results, format: .ndjson, mode: .append, inputFiles: InputFileList(["a.ndjson", "b.ndjson"]))
        let journal = try SendJournal(path: journalPath, mode: .append)
        #expect(writer.droppedTornBytes > 0 && journal.droppedTornBytes == 5)
        journal.recordSent(fileIndex: 0, line: 7)
        try journal.flush()
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 6), outcome: .inDoubt))
        try writer.flush()
        let state = try ResumeState(resultsPath: results, journalPath: journalPath, inputs: ["a.ndjson", "b.ndjson"])
        #expect(state.tornResultLine == nil && state.tornJournalLine == nil)
        #expect(state.status(RecordKey(fileIndex: 0, line: 6)) == .finished)
        #expect(state.status(RecordKey(fileIndex: 0, line: 7)) == .inDoubt)
        #expect(state.status(RecordKey(fileIndex: 1, line: 3)) == .fresh)
    }

    @Test("a complete last result line without its newline does not count as finished (reopening cuts it)")
    func unterminatedCompleteLine() throws {
        let directory = try Support.temporaryDirectory()
        let results = try Support.write(
            #"{"file":"a","line":1,"outcome":"delivered","attempts":1}"#, to: "r.ndjson", in: directory)
        let state = try ResumeState(resultsPath: results, journalPath: nil, inputs: ["a"])
        #expect(state.status(RecordKey(fileIndex: 0, line: 1)) == .fresh)
        #expect(state.tornResultLine == 1)
        // A reader for prune/replay still takes it.
        let reader = try ResultReader(path: results)
        #expect(try reader.next()?.key.line == 1)
    }

    @Test("missing files mean a fresh run; results for another input, or a journal index beyond the inputs, fail")
    func mismatches() throws {
        let directory = try Support.temporaryDirectory()
        let none = try ResumeState(
            resultsPath: directory.appendingPathComponent("nope").path,
            journalPath: directory.appendingPathComponent("nope.journal").path, inputs: ["a"])
        #expect(none.status(RecordKey(fileIndex: 0, line: 1)) == .fresh)
        let results = try Support.write(
            #"{"file":"other","line":1,"outcome":"delivered"}"# + "\n", to: "r.ndjson", in: directory)
        #expect(throws: PipelineError.self) { try ResumeState(resultsPath: results, journalPath: nil, inputs: ["a"]) }
        let journal = try Support.write("s 3 1\n", to: "j", in: directory)
        #expect(throws: PipelineError.self) {
            try ResumeState(
                resultsPath: directory.appendingPathComponent("x").path, journalPath: journal, inputs: ["a"])
        }
        let badJournal = try Support.write("s 0 1\nx 0 1\ns 0 2\n", to: "bad", in: directory)
        #expect(throws: PipelineError.self) {
            try ResumeState(
                resultsPath: directory.appendingPathComponent("x").path, journalPath: badJournal, inputs: ["a"])
        }
    }

    @Test("the journal writes one batch with one write, in the documented text form")
    func journalFormat() throws {
        let sink = MemoryByteSink()
        let journal = SendJournal(sink: sink)
        journal.recordSent(fileIndex: 0, line: 12)
        journal.recordSent(fileIndex: 3, line: 1_000_000_000_000)
        journal.recordRetryable(fileIndex: 0, line: 12)
        try journal.flush()
        #expect(sink.text == "s 0 12\ns 3 1000000000000\nr 0 12\n")
        #expect(sink.writeCount == 1)
        var entries: [SendJournal.Entry] = []
        try SendJournal.read(source: MemoryByteSource(sink.bytes), name: "j") { entries.append($0) }
        #expect(entries.map(\.line) == [12, 1_000_000_000_000, 12])
        #expect(entries.map(\.kind) == [.sent, .sent, .retryable])
    }

    @Test("100k records take at most 21 bytes each, and a final line always wins over the journal")
    func compactness() {
        var state = ResumeState()
        for line in 1...100_000 {
            state.note(SendJournal.Entry(kind: .sent, fileIndex: line % 3, line: line))
            if line % 2 == 0 { state.markFinished(RecordKey(fileIndex: line % 3, line: line)) }
        }
        for line in stride(from: 2, through: 100_000, by: 2) {
            state.note(SendJournal.Entry(kind: .retryable, fileIndex: line % 3, line: line))
        }
        #expect(state.memoryBytes <= 100_000 * 21)
        #expect(state.finishedCount == 50_000)
        #expect(state.status(RecordKey(fileIndex: 2, line: 2)) == .finished)
        #expect(state.status(RecordKey(fileIndex: 1, line: 1)) == .inDoubt)
        #expect(state.status(RecordKey(fileIndex: 0, line: 1)) == .fresh)
    }
}
