import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

/// The digest journaled with each send of a stream (`SentDigest`, `SendJournal`), and the check of a continued
/// stream against what the earlier run wrote (`ContinuedStream`), without a network.
@Suite("a continued stream is the same stream")
struct ContinuedStreamTests {
    typealias Support = PipelineTestSupport

    /// Hands out records from an array.
    final class ArrayReader: RecordReader {
        var records: [CampaignRecord]
        var taken = 0
        init(_ records: [CampaignRecord]) { self.records = records }
        func nextRecord() throws -> CampaignRecord? {
            guard taken < records.count else { return nil }
            taken += 1
            return records[taken - 1]
        }
        var readProgress: ReadProgress? { nil }
    }

    static func records(_ lines: [String]) -> [CampaignRecord] {
        lines.enumerated().map { index, text in Support.parseLine(text, line: index + 1) }
    }

    static func line(_ token: Int, _ alert: String = "hi") -> String {
        #"{"token":"\#(Support.token(token))","payload":{"aps":{"alert":"\#(alert)"}}}"#
    }

    /// An earlier run of `records` from standard input: the first `answered` delivered (result lines), every one of
    /// them and the next `inFlight` journaled as sent, with their digests (`digests: false`: as an older journal).
    static func earlierRun(
        _ records: [CampaignRecord], answered: Int, inFlight: Int, digests: Bool = true
    ) throws -> (results: String, journal: String) {
        let directory = try Support.temporaryDirectory()
        let results = directory.appendingPathComponent("r.ndjson").path
        let journalPath = SendJournal.path(forResults: results)
        let writer = try ResultWriter(path: results, format: .ndjson, mode: .create, inputFiles: InputFileList(["-"]))
        let journal = try SendJournal(path: journalPath, mode: .create)
        for record in records.prefix(answered + inFlight) {
            guard let notification = record.notification else { continue }
            if digests {
                journal.recordSent(fileIndex: 0, line: record.key.line, digest: SentDigest.of(notification))
            } else {
                journal.recordSent(fileIndex: 0, line: record.key.line)
            }
        }
        for record in records.prefix(answered) {
            try writer.write(
                ResultRecord(
                    key: record.key, outcome: record.notification == nil ? .inputError : .delivered,
                    token: record.tokenText, topic: record.topicText, status: 200, attempts: 1,
                    notification: record.notification))
        }
        try journal.flush()
        try writer.flush()
        return (results, journalPath)
    }

    static func continued(_ records: [CampaignRecord], _ files: (results: String, journal: String)) throws
        -> ContinuedStream
    {
        try ContinuedStream(
            ArrayReader(records), inputs: [CampaignInput(path: "-")], resultsPath: files.results,
            journalPath: files.journal, isAnswered: { _ in false })
    }

    static func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as PipelineError {
            return error.kind == .campaignChanged ? error.detail : "another kind: \(error)"
        } catch {
            return "another error: \(error)"
        }
    }

    @Test("the digest changes with the token, the topic, a header or the payload, and only then")
    func digest() throws {
        let base = try #require(Self.records([Self.line(1)]).first?.notification)
        #expect(SentDigest.of(base) == SentDigest.of(try #require(Self.records([Self.line(1)]).first?.notification)))
        for other in [
            Self.line(2), Self.line(1, "ho"),
            #"{"token":"\#(Support.token(1))","priority":5,"payload":{"aps":{"alert":"hi"}}}"#,
            #"{"token":"\#(Support.token(1))","topic":"com.example.other","payload":{"aps":{"alert":"hi"}}}"#,
            #"{"token":"\#(Support.token(1))","collapse_id":"x","payload":{"aps":{"alert":"hi"}}}"#,
        ] {
            let notification = try #require(Self.records([other]).first?.notification)
            #expect(SentDigest.of(notification) != SentDigest.of(base), "\(other)")
        }
        // The fingerprint's tail: every length up to two steps, one byte changed, gives another value.
        for length in 0...40 {
            let bytes = [UInt8](repeating: 7, count: length)
            for index in 0..<length {
                var changed = bytes
                changed[index] = 8
                #expect(
                    ContentFingerprint.digest64(changed.span) != ContentFingerprint.digest64(bytes.span),
                    "\(length), \(index)")
            }
        }
    }

    @Test("journal lines with and without a digest read back; a damaged digest is an error")
    func journalDigest() throws {
        let sink = MemoryByteSink()
        let journal = SendJournal(sink: sink)
        journal.recordSent(fileIndex: 0, line: 7, digest: 0xFF)
        journal.recordSent(fileIndex: 1, line: 8)
        try journal.flush()
        #expect(String(decoding: sink.bytes, as: UTF8.self) == "s 0 7 00000000000000ff\ns 1 8\n")
        var entries: [SendJournal.Entry] = []
        try SendJournal.read(source: MemoryByteSource(sink.bytes), name: "j") { entries.append($0) }
        #expect(entries.map(\.digest) == [0xFF, nil])
        for bad in ["s 0 7 ff\n", "r 0 7 00000000000000ff\n", "s 0 7 0000000000000xff\n"] {
            #expect(throws: PipelineError.self, "\(bad)") {
                try SendJournal.read(source: MemoryByteSource(Array(bad.utf8)), name: "j") { _ in }
            }
        }
    }

    @Test(
        "the same stream passes and reads ahead to the first record never answered; another is refused naming the line")
    func sameAndOther() throws {
        let records = Self.records((1...10).map { Self.line($0) })
        let files = try Self.earlierRun(records, answered: 4, inFlight: 2)
        let same = try Self.continued(records, files)
        try same.prepareToStart()
        #expect((same.readAheadCount, records.count) == (7, 10))  // 4 answered, 2 in doubt, and the first never sent
        var read = 0
        while try same.nextRecord() != nil { read += 1 }
        #expect(read == 10)

        // Another token on line 3 (a result line), another payload on line 5 (only journaled).
        var otherToken = records
        otherToken[2] = Self.records([Self.line(99), Self.line(99), Self.line(99)])[2]
        let refused = Self.refusal { try Self.continued(otherToken, files).prepareToStart() }
        #expect(
            refused?.contains("standard input is not the stream") == true
                && refused?.contains("line 3 has another token") == true,
            "\(refused ?? "not refused")")
        var otherPayload = records
        otherPayload[4] = Self.records((1...5).map { Self.line($0, "changed") })[4]
        let changed = Self.refusal { try Self.continued(otherPayload, files).prepareToStart() }
        #expect(changed?.contains("line 5 holds another notification") == true, "\(changed ?? "not refused")")
        // An invalid record where a valid one was sent.
        var invalid = records
        invalid[0] = Support.parseLine(#"{"token":"abc","payload":{}}"#, line: 1)
        #expect(Self.refusal { try Self.continued(invalid, files).prepareToStart() } != nil)
    }

    @Test(
        "journal lines without a digest (an older run) are not checked; a mismatch after the read-ahead stops the read")
    func olderJournalAndLaterMismatch() throws {
        let records = Self.records((1...6).map { Self.line($0) })
        let older = try Self.earlierRun(records, answered: 0, inFlight: 6, digests: false)
        var otherPayload = records
        otherPayload[1] = Self.records((1...2).map { Self.line($0, "changed") })[1]
        let unchecked = try Self.continued(otherPayload, older)
        try unchecked.prepareToStart()
        #expect(unchecked.readAheadCount == 1)  // nothing checkable: the first record is the first never answered

        // Answered: lines 1-2 and 5; line 5 differs. The read-ahead stops at line 3, the check at line 5.
        let files = try Self.earlierRun(Array(records.prefix(2)), answered: 2, inFlight: 0)
        var later = records
        later[4] = Self.records((1...5).map { Self.line($0 + 50) })[4]
        let appended = try FileHandle(forWritingTo: URL(fileURLWithPath: files.results))
        try appended.seekToEnd()
        try appended.write(
            contentsOf: Data(
                #"{"file":"-","line":5,"token":"\#(Support.token(5))","topic":"com.example.app","outcome":"delivered","status":200,"attempts":1}"#
                    .utf8 + [0x0A]))
        try appended.close()
        let stream = try Self.continued(later, files)
        try stream.prepareToStart()
        #expect(stream.readAheadCount == 3)
        let refused = Self.refusal { while try stream.nextRecord() != nil {} }
        #expect(refused?.contains("line 5 has another token") == true, "\(refused ?? "not refused")")
    }
}
