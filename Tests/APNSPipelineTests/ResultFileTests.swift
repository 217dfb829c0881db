import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

@Suite("Result files: write, read back, torn lines")
struct ResultFileTests {
    typealias Support = PipelineTestSupport

    /// The input files the sample records' keys index (awkward text in the `file` field too).
    static let inputFiles = InputFileList(["dir/with, comma \"q\".ndjson", "b.csv"])

    /// One record of every outcome, with awkward text in every string field, built as the dispatcher builds them
    /// (the delivered line's apns-id is the answer's).
    static func sampleRecords() throws -> [ResultRecord] {
        let notification = PushNotification(
            token: try DeviceToken(parsing: Support.token(1)), topic: try Topic(validating: "com.example.app.voip"),
            pushType: .voip, priority: .powerAware, expiration: .absolute(try Expiration(epochSeconds: 1_700_000_000)),
            collapseID: try CollapseID(validating: "c,\"1\""),
            apnsID: try APNSID(parsing: "123e4567-e89b-12d3-a456-426614174000"),
            payload: Array(#"{ "aps" : {"alert":"caf\u00e9, \"x\"\n"},"n":[1 ,2]}"#.utf8)
        )
        var records: [ResultRecord] = []
        for (index, outcome) in RecordOutcome.allCases.enumerated() {
            var record = ResultRecord(
                key: RecordKey(fileIndex: 0, line: index + 1), outcome: outcome,
                status: outcome == .delivered ? 200 : 503, reason: outcome == .delivered ? nil : "ServiceUnavailable",
                detail: "line one\nline two\t\u{01} é 😀 \\ \"",
                apnsID: outcome == .delivered ? "123e4567-e89b-12d3-a456-426614174000" : nil,
                timestamp: outcome == .prune ? 1_700_000_000_123 : nil, attempts: index, notification: notification
            )
            if outcome == .delivered { record.apnsUniqueID = "5b0a7c1e-3f0d-4e8a-9c1b-2d3e4f5a6b7c" }
            if outcome == .inputError {
                let error = InputError(.tokenOddLength, "device token has 3 hex digits: odd length")
                record = ResultRecord(
                    key: RecordKey(fileIndex: 1, line: 9), outcome: .inputError, token: "a\"b\u{7}",
                    reason: error.code.rawValue, detail: error.detail
                )
            }
            records.append(record)
        }
        return records
    }

    private func roundTrip(_ records: [ResultRecord], format: ResultFormat) throws -> (
        bytes: [UInt8], read: [ResultRecord]
    ) {
        let sink = MemoryByteSink()
        let writer = ResultWriter(sink: sink, format: format, inputFiles: Self.inputFiles)
        for record in records { try writer.write(record) }
        try writer.flush()
        let reader = try ResultReader(source: MemoryByteSource(sink.bytes, chunkSize: 13), name: "results")
        #expect(reader.format == format)
        var read: [ResultRecord] = []
        while let record = try reader.next() { read.append(record) }
        #expect(reader.tornLine == nil)
        return (sink.bytes, read)
    }

    @Test("every outcome survives write then read, NDJSON and CSV", arguments: ResultFormat.allCases)
    func roundTripEveryOutcome(format: ResultFormat) throws {
        let records = try Self.sampleRecords()
        let (bytes, read) = try roundTrip(records, format: format)
        #expect(read == records)
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if format == .ndjson {
            #expect(lines.count == records.count + 1)  // one line each, then the final empty piece
        } else {
            #expect(lines.first == Substring(ResultRecord.fieldNames.joined(separator: ",")))
        }
    }

    @Test("lines at the edges of the short forms (delivered 200, one attempt, nothing after) are spelled in full")
    func shortFormEdges() throws {
        let token = Support.token(1)
        func line(
            _ outcome: RecordOutcome, status: Int?, attempts: Int, topic: String? = "t.x", apnsID: String? = nil,
            replay: Bool = false
        ) throws -> String {
            let notification = PushNotification(
                token: try DeviceToken(parsing: token), topic: try Topic(validating: "t.x"), pushType: .alert,
                payload: Array(#"{"a":1}"#.utf8))
            let record = ResultRecord(
                key: RecordKey(fileIndex: 0, line: 7), outcome: outcome, token: token, topic: topic, status: status,
                apnsID: apnsID, attempts: attempts, notification: replay ? notification : nil)
            var out: [UInt8] = []
            record.appendNDJSON(file: "f", to: &out)
            return String(decoding: out, as: UTF8.self)
        }
        let head = #"{"file":"f","line":7,"token":""# + token + #"","topic":"t.x","#
        #expect(
            try line(.delivered, status: 200, attempts: 1) == head
                + #""outcome":"delivered","status":200,"attempts":1}"# + "\n")
        #expect(
            try line(.delivered, status: 200, attempts: 2) == head
                + #""outcome":"delivered","status":200,"attempts":2}"# + "\n")
        #expect(
            try line(.delivered, status: 201, attempts: 1) == head
                + #""outcome":"delivered","status":201,"attempts":1}"# + "\n")
        #expect(try line(.delivered, status: nil, attempts: 1) == head + #""outcome":"delivered","attempts":1}"# + "\n")
        #expect(
            try line(.prune, status: 200, attempts: 1) == head + #""outcome":"prune","status":200,"attempts":1}"# + "\n"
        )
        #expect(
            try line(.delivered, status: 200, attempts: 1, apnsID: "i") == head
                + #""outcome":"delivered","status":200,"apns_id":"i","attempts":1}"# + "\n")
        // The shortest form's strings are escaped like any other, and without a topic it is not taken.
        #expect(
            try line(.delivered, status: 200, attempts: 1, topic: "t.\"x\u{1}", apnsID: "i\\")
                == #"{"file":"f","line":7,"token":""#
                + token + #"","topic":"t.\"x\u0001","outcome":"delivered","status":200,"apns_id":"i\\","attempts":1}"#
                + "\n")
        #expect(
            try line(.delivered, status: 200, attempts: 1, topic: nil) == #"{"file":"f","line":7,"token":""# + token
                + #"","outcome":"delivered","status":200,"attempts":1}"# + "\n")
        #expect(
            try line(.retryable, status: 503, attempts: 1, replay: true) == head
                + #""outcome":"retryable","status":503,"attempts":1,"push_type":"alert","payload":{"a":1}}"# + "\n")
    }

    @Test("a writer's plain deliveries follow each change of topic, and match the line written on its own")
    func deliveryLinesAcrossTopics() throws {
        let sink = MemoryByteSink()
        let writer = ResultWriter(sink: sink, format: .ndjson, inputFiles: InputFileList(["f"]))
        let topics = ["a.x", "a.x", "b.\"y", "a.x", String("a.x".reversed().reversed()), "c.z"]
        var expected: [UInt8] = []
        for (index, topic) in topics.enumerated() {
            let record = ResultRecord(
                key: RecordKey(fileIndex: 0, line: index + 1), outcome: .delivered, token: Support.token(index),
                topic: topic, status: 200, apnsID: index % 2 == 0 ? nil : "id-\(index)", attempts: 1)
            try writer.write(record)
            record.appendNDJSON(file: "f", to: &expected)
        }
        // A line that is no plain delivery between two that are: the kept middle neither leaks into it nor goes stale.
        let retried = ResultRecord(
            key: RecordKey(fileIndex: 0, line: 9), outcome: .delivered, token: Support.token(9), topic: "d.w",
            status: 200,
            attempts: 2)
        try writer.write(retried)
        retried.appendNDJSON(file: "f", to: &expected)
        let last = ResultRecord(
            key: RecordKey(fileIndex: 0, line: 10), outcome: .delivered, token: Support.token(10), topic: "c.z",
            status: 200,
            attempts: 1)
        try writer.write(last)
        last.appendNDJSON(file: "f", to: &expected)
        try writer.flush()
        #expect(sink.bytes == expected)
        let lines = sink.text.split(separator: "\n")
        #expect(
            lines[2] == #"{"file":"f","line":3,"token":""# + Support.token(2)
                + #"","topic":"b.\"y","outcome":"delivered","status":200,"attempts":1}"#)
        #expect(
            lines[3].hasSuffix(#"","topic":"a.x","outcome":"delivered","status":200,"apns_id":"id-3","attempts":1}"#))
        #expect(lines[7].hasSuffix(#"","topic":"c.z","outcome":"delivered","status":200,"attempts":1}"#))
    }

    @Test(
        "only lines replay sends again (by default, or expired ones with a new deadline) carry the replay fields; the payload is embedded raw"
    )
    func replayFields() throws {
        let records = try Self.sampleRecords()
        #expect(records[0].outcome == .delivered && records[0].payload == nil && records[0].pushType == nil)
        #expect(records[0].apnsID == "123e4567-e89b-12d3-a456-426614174000")
        for record in records {
            // `expired` lines too: `replay --not-after` sends them.
            let carries = record.outcome.isReplayable || record.outcome == .expired
            #expect((record.payload != nil) == carries, "\(record.outcome)")
            #expect((record.pushType != nil) == carries, "\(record.outcome)")
        }
        let retryable = try #require(records.first { $0.outcome == .retryable })
        let sink = MemoryByteSink()
        let writer = ResultWriter(sink: sink, format: .ndjson, inputFiles: Self.inputFiles)
        try writer.write(retryable)
        try writer.flush()
        #expect(sink.text.contains(#""payload":{ "aps" : {"alert":"caf\u00e9, \"x\"\n"},"n":[1 ,2]}}"#))
        #expect(sink.text.contains(#""push_type":"voip","priority":5,"expiration":1700000000,"collapse_id":"c,\"1\"""#))
        let notification = try retryable.replayNotification()
        #expect(notification.payload == retryable.payload)
        #expect(notification.pushType == .voip && notification.priority == .powerAware)
        #expect(notification.apnsID?.description == "123e4567-e89b-12d3-a456-426614174000")
    }

    @Test("a pretty payload's line breaks become spaces so the line stays whole; a non-object payload is a string")
    func payloadLineBreaks() throws {
        var record = ResultRecord(key: RecordKey(fileIndex: 0, line: 1), outcome: .retryable)
        record.payload = Array("{\n  \"a\": 1\r\n}".utf8)
        var notJSON = ResultRecord(key: RecordKey(fileIndex: 0, line: 2), outcome: .notSent)
        notJSON.payload = Array("not json\n".utf8)
        let (bytes, read) = try roundTrip([record, notJSON], format: .ndjson)
        #expect(bytes.filter { $0 == 0x0A }.count == 2)
        #expect(read[0].payload == Array("{   \"a\": 1  }".utf8))
        #expect(read[1].payload == Array("not json\n".utf8))
    }

    @Test("a result line written elsewhere with CRs in its payload's white space reads as the writer would write it")
    func payloadCarriageReturns() throws {
        // Found by the ResultLine fuzzer: read, written again and read back, the payload's CRs had become spaces.
        let line =
            Array(#"{"file":"a.ndjson","line":1,"outcome":"retryable","attempts":1,"payload":{"aps":{"alert":"hi"#.utf8)
            + [0x22, 0x0D, 0x0D, 0x7D, 0x0D, 0x7D, 0x7D, 0x0A]
        let reader = try ResultReader(source: MemoryByteSource(line, chunkSize: 7), name: "results")
        let record = try #require(try reader.next())
        #expect(record.payload == Array(#"{"aps":{"alert":"hi"  } }"#.utf8))
        var written: [UInt8] = []
        record.appendNDJSON(file: "a.ndjson", to: &written)
        var files = InputFileList([])
        let again = try ResultRecord(ndjson: written, range: 0..<(written.count - 1), inputFiles: &files)
        #expect(again == record)
    }

    @Test(
        "a payload object given as a string or a CSV cell reads as the NDJSON writer writes it; other strings stay as they are"
    )
    func payloadObjectInAStringOrCell() throws {
        // Found by the ResultLine fuzzer: a payload string holding an object and a line break, written as NDJSON
        // (the object as it stands, the break as a space), read back as other bytes than it was read with.
        let ndjson =
            Array(#"{"file":"a","line":1,"outcome":"retryable","payload":"{}\n"}"#.utf8) + [0x0A]
            + Array(#"{"file":"a","line":2,"outcome":"retryable","payload":"not json\n"}"#.utf8) + [0x0A]
        let csv = Array("file,line,outcome,payload\na,3,retryable,\"{\"\"a\"\":\r\n1}\"\n".utf8)
        var read: [ResultRecord] = []
        for bytes in [ndjson, csv] {
            let reader = try ResultReader(source: MemoryByteSource(bytes, chunkSize: 5), name: "results")
            while let record = try reader.next() { read.append(record) }
        }
        try #require(read.count == 3)
        #expect(read[0].payload == Array("{}".utf8))
        #expect(read[1].payload == Array("not json\n".utf8))
        #expect(read[2].payload == Array(#"{"a":  1}"#.utf8))
        for record in read {
            var written: [UInt8] = []
            record.appendNDJSON(file: "a", to: &written)
            var files = InputFileList([])
            let again = try ResultRecord(ndjson: written, range: 0..<(written.count - 1), inputFiles: &files)
            #expect(again.payload == record.payload)
        }
    }

    @Test("writes go out only on flush, one write per flush")
    func buffering() throws {
        let sink = MemoryByteSink()
        let writer = ResultWriter(sink: sink, format: .ndjson, inputFiles: Self.inputFiles)
        for index in 1...100 {
            try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: index), outcome: .delivered))
        }
        #expect(sink.writeCount == 0)
        #expect(writer.bufferedByteCount > 0)
        try writer.flush()
        #expect(sink.writeCount == 1)
        try writer.flush()
        #expect(sink.writeCount == 1)
        #expect(writer.recordsWritten == 100)
    }

    @Test("a torn last line is skipped and reported, in NDJSON and CSV", arguments: ResultFormat.allCases)
    func tornLastLine(format: ResultFormat) throws {
        let records = try Self.sampleRecords()
        let sink = MemoryByteSink()
        let writer = ResultWriter(sink: sink, format: format, inputFiles: Self.inputFiles)
        for record in records { try writer.write(record) }
        try writer.flush()
        let whole = sink.bytes
        let lastStart = (whole.dropLast().lastIndex(of: 0x0A) ?? 0) + 1
        // Cut the last line at every point inside it (kill -9 in the middle of a write).
        for cut in stride(from: lastStart + 1, to: whole.count - 1, by: 7) {
            let reader = try ResultReader(source: MemoryByteSource(Array(whole[0..<cut])), name: "r")
            var read: [ResultRecord] = []
            while let record = try reader.next() { read.append(record) }
            let complete = read.count == records.count  // a cut that leaves a still-valid line (CSV without its end)
            #expect(complete || read.count == records.count - 1, "cut at \(cut)")
            #expect(complete || reader.tornLine != nil, "cut at \(cut)")
            #expect(Array(read.prefix(records.count - 1)) == Array(records.prefix(records.count - 1)))
        }
    }

    // Found by timed fuzzing: a CSV cell that is not UTF-8 was read as raw bytes (payload) or with U+FFFD (text), so
    // the record written again did not read back the same. Such a line is damaged, like invalid UTF-8 in a campaign.
    @Test(
        "a CSV result line with bytes that are not UTF-8 is damaged (RecordInvalidUtf8), not read changed",
        arguments: ["payload", "apns_id", "detail"])
    func csvCellNotUTF8(column: String) throws {
        let header = ResultRecord.fieldNames.joined(separator: ",") + "\n"
        var cells = [String](repeating: "", count: ResultRecord.fieldNames.count)
        cells[0] = "a"
        cells[1] = "2"
        cells[4] = "retryable"
        cells[ResultRecord.fieldNames.firstIndex(of: "attempts") ?? 0] = "1"
        let marker = "MARK"
        cells[ResultRecord.fieldNames.firstIndex(of: column) ?? 0] =
            column == "payload" ? #""{""a"":""MARK""}""# : marker
        var bytes = Array((header + "a,1,,,delivered,200,,,,,,1,,,,,\n" + cells.joined(separator: ",") + "\n").utf8)
        let at = try #require(bytes.indices.last { Array(bytes[$0...].prefix(4)) == Array(marker.utf8) })
        bytes[at + 1] = 0xFE
        let reader = try ResultReader(source: MemoryByteSource(bytes), name: "r.csv")
        #expect(try reader.nextLine().map { (try? $0.get()) != nil } == true)
        let second = try #require(try reader.nextLine())
        guard case .failure(let damaged) = second else {
            Issue.record("a line with a non-UTF-8 \(column) was read as a record")
            return
        }
        #expect(damaged.error.code == .recordInvalidUTF8)
        #expect(try reader.nextLine() == nil)
    }

    @Test("a bad line that is not the last is an error naming file and line", arguments: ResultFormat.allCases)
    func badMiddleLine(format: ResultFormat) throws {
        let header = format == .csv ? ResultRecord.fieldNames.joined(separator: ",") + "\n" : ""
        let good =
            format == .csv
            ? "a,1,,,delivered,200,,,,,,1,,,,,\n" : #"{"file":"a","line":1,"outcome":"delivered","attempts":1}"# + "\n"
        let bad =
            format == .csv ? "a,x,,,delivered,200,,,,,,1,,,,,\n" : #"{"file":"a","line":2,"outcome":"sent"}"# + "\n"
        let reader = try ResultReader(source: MemoryByteSource(header + good + bad + good), name: "res.\(format)")
        #expect(try reader.next() != nil)
        #expect {
            _ = try reader.next()
        } throws: { error in
            (error as? PipelineError)?.kind == .resultLineInvalid
                && "\(error)".contains("res.\(format):\(format == .csv ? 3 : 2)")
        }
    }

    @Test("appending after a crash cuts the torn tail first, so new lines never join it")
    func appendAfterTornTail() throws {
        let directory = try Support.temporaryDirectory()
        let full = #"{"file":"a","line":1,"outcome":"delivered","attempts":1}"# + "\n"
        let path = try Support.write(full + #"{"file":"a","line":2,"outc"#, to: "r.ndjson", in: directory)
        let writer = try ResultWriter(path: path, format: .ndjson, mode: .append, inputFiles: InputFileList(["a"]))
        #expect(writer.droppedTornBytes == #"{"file":"a","line":2,"outc"#.utf8.count)
        try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: 2), outcome: .delivered, attempts: 1))
        try writer.flush()
        let reader = try ResultReader(path: path)
        var lines: [Int] = []
        while let record = try reader.next() { lines.append(record.key.line) }
        #expect(lines == [1, 2])
        #expect(reader.tornLine == nil)
    }

    @Test("a new CSV result file gets a header; appending to a non-empty one does not repeat it")
    func csvHeaderOnce() throws {
        let directory = try Support.temporaryDirectory()
        let path = directory.appendingPathComponent("r.csv").path
        for line in 1...2 {
            let writer = try ResultWriter(
                path: path, format: .csv, mode: line == 1 ? .create : .append, inputFiles: InputFileList(["a"]))
            try writer.write(ResultRecord(key: RecordKey(fileIndex: 0, line: line), outcome: .delivered))
            try writer.flush()
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.components(separatedBy: "file,line,").count == 2)
        let reader = try ResultReader(path: path)
        #expect(try reader.next()?.key.line == 1)
        #expect(try reader.next()?.key.line == 2)
    }
}
