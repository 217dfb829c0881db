import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

/// `apns_unique_id` in result lines (docs/FILES.md, "Result files"): written and read back in NDJSON and CSV, kept
/// values still last, and result files written before the field existed still read.
@Suite("Result files: apns_unique_id")
struct ResultUniqueIDTests {
    typealias Support = PipelineTestSupport

    static let uniqueID = "5b0a7c1e-3f0d-4e8a-9c1b-2d3e4f5a6b7c"
    static let apnsID = "123e4567-e89b-12d3-a456-426614174000"

    static func records(kept: Bool) -> [ResultRecord] {
        var plain = ResultRecord(
            key: RecordKey(fileIndex: 0, line: 1), outcome: .delivered, token: Support.token(1),
            topic: "com.example.app",
            status: 200, apnsID: apnsID, apnsUniqueID: uniqueID, attempts: 1)
        var retried = ResultRecord(
            key: RecordKey(fileIndex: 0, line: 2), outcome: .delivered, token: Support.token(2),
            topic: "com.example.app",
            status: 200, apnsID: apnsID, apnsUniqueID: uniqueID.uppercased(), attempts: 3)
        var withoutApnsID = ResultRecord(
            key: RecordKey(fileIndex: 0, line: 3), outcome: .delivered, token: Support.token(3),
            topic: "com.example.app",
            status: 200, apnsUniqueID: "a,\"b", attempts: 1)
        var none = ResultRecord(
            key: RecordKey(fileIndex: 0, line: 4), outcome: .delivered, token: Support.token(4),
            topic: "com.example.app",
            status: 200, apnsID: apnsID, attempts: 1)
        if kept {
            for index in 0..<4 {
                let values = KeptValues(names: ["user_id"], values: ["u\(index)"])
                switch index {
                case 0: plain.kept = values
                case 1: retried.kept = values
                case 2: withoutApnsID.kept = values
                default: none.kept = values
                }
            }
        }
        return [plain, retried, withoutApnsID, none]
    }

    private func roundTrip(_ records: [ResultRecord], format: ResultFormat, keptNames: [String]) throws -> (
        String, [ResultRecord]
    ) {
        let sink = MemoryByteSink()
        let writer = ResultWriter(
            sink: sink, format: format, inputFiles: InputFileList(["a.ndjson"]), keptNames: keptNames)
        for record in records { try writer.write(record) }
        try writer.flush()
        let reader = try ResultReader(source: MemoryByteSource(sink.bytes, chunkSize: 11), name: "results")
        var read: [ResultRecord] = []
        while let record = try reader.next() { read.append(record) }
        return (String(decoding: sink.bytes, as: UTF8.self), read)
    }

    @Test(
        "apns_unique_id survives write then read, with and without kept values, NDJSON and CSV",
        arguments: ResultFormat.allCases, [false, true])
    func roundTrip(format: ResultFormat, kept: Bool) throws {
        let records = Self.records(kept: kept)
        let (text, read) = try roundTrip(records, format: format, keptNames: kept ? ["user_id"] : [])
        #expect(read == records)
        #expect(read.map(\.apnsUniqueID) == [Self.uniqueID, Self.uniqueID.uppercased(), "a,\"b", nil])
        let lines = text.split(separator: "\n")
        if format == .ndjson {
            #expect(
                lines[0].contains(#""apns_id":"\#(Self.apnsID)","apns_unique_id":"\#(Self.uniqueID)","attempts":1"#))
            #expect(!lines[3].contains("apns_unique_id"))
            if kept {
                #expect(
                    lines.allSatisfy { $0.hasSuffix(#","kept":{"user_id":"u\#(lines.firstIndex(of: $0) ?? 0)"}}"#) })
            }
        } else {
            let header = String(lines[0])
            #expect(header.contains(",apns_id,apns_unique_id,timestamp,"))
            #expect(header.hasSuffix(kept ? ",payload,user_id" : ",payload"), "kept columns stay last")
        }
    }

    @Test(
        "result files written before apns_unique_id existed still read: NDJSON lines and a CSV header without the column"
    )
    func oldFiles() throws {
        let ndjson =
            #"{"file":"a.ndjson","line":1,"token":"ab","topic":"t","outcome":"delivered","status":200,"apns_id":"\#(Self.apnsID)","attempts":1}"#
            + "\n"
        let oldNames = ResultRecord.fieldNames.filter { $0 != "apns_unique_id" }
        #expect(oldNames.count == ResultRecord.fieldNames.count - 1)
        let csv =
            oldNames.joined(separator: ",") + ",user_id\n"
            + "a.ndjson,1,ab,t,delivered,200,,,\(Self.apnsID),,2,,,,,,u7\n"
        for (name, text) in [("old.ndjson", ndjson), ("old.csv", csv)] {
            let reader = try ResultReader(source: MemoryByteSource(Array(text.utf8)), name: name)
            let record = try #require(try reader.next(), "\(name)")
            #expect(record.apnsID == Self.apnsID, "\(name)")
            #expect(record.apnsUniqueID == nil, "\(name)")
            #expect(record.outcome == .delivered, "\(name)")
            if name.hasSuffix("csv") {
                #expect(record.attempts == 2)
                #expect(record.kept?.value(named: "user_id") == "u7")
            }
            #expect(try reader.next() == nil)
        }
    }

    @Test(
        "continuing (--resume) a CSV result file whose header has no apns_unique_id keeps its layout; a new file has the column"
    )
    func appendToOldCSV() throws {
        let directory = try Support.temporaryDirectory()
        let path = directory.appendingPathComponent("old.csv").path
        let oldNames = ResultRecord.fieldNames.filter { $0 != "apns_unique_id" }
        let old = oldNames.joined(separator: ",") + "\n" + "a.ndjson,1,ab,t,delivered,200,,,\(Self.apnsID),,1,,,,,\n"
        try old.write(toFile: path, atomically: true, encoding: .utf8)
        let writer = try ResultWriter(path: path, format: .csv, mode: .append, inputFiles: InputFileList(["a.ndjson"]))
        #expect(!writer.csvUniqueIDColumn)
        let added = Self.records(kept: false)[0]
        try writer.write(added)
        try writer.flush()
        let reader = try ResultReader(path: path)
        #expect(try reader.next()?.apnsID == Self.apnsID)
        let second = try #require(try reader.next())
        #expect(
            second.key.line == 1 && second.apnsID == Self.apnsID && second.attempts == 1 && second.apnsUniqueID == nil)
        #expect(try reader.next() == nil)

        let fresh = directory.appendingPathComponent("new.csv").path
        for mode in [AppendOnlyFile.Mode.create, .append] {
            let writer = try ResultWriter(
                path: fresh, format: .csv, mode: mode, inputFiles: InputFileList(["a.ndjson"]))
            #expect(writer.csvUniqueIDColumn)
            try writer.write(added)
            try writer.flush()
        }
        let freshReader = try ResultReader(path: fresh)
        #expect(try freshReader.next()?.apnsUniqueID == Self.uniqueID)
        #expect(try freshReader.next()?.apnsUniqueID == Self.uniqueID)
    }
}
