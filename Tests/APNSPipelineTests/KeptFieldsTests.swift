import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

/// `--keep`: the option's names, the values taken from NDJSON and CSV records, and how result lines and prune rows
/// carry them (docs/FILES.md, "Kept fields").
@Suite("kept fields: parsing, extraction, result lines and prune rows")
struct KeptFieldsTests {
    typealias Support = PipelineTestSupport

    @Test("the option's names: letters, digits, _ - . each once; reserved column names and empty names refused")
    func parsing() throws {
        #expect(try KeptFields(parsing: "user_id,device-id,a.b,X9").names == ["user_id", "device-id", "a.b", "X9"])
        for bad in [
            "", "user_id,", ",a", "a,a", "token", "timestamp_iso", "kept", "payload", "user id", "é", "a\u{1B}",
            String(repeating: "x", count: 65),
        ] {
            #expect(throws: KeptFields.Problem.self, "\(bad)") { try KeptFields(parsing: bad) }
        }
        #expect(KeptFields(checkedNames: ["a", "token", "a", "b c", "b"]).names == ["a", "b"])
    }

    @Test(
        "NDJSON values: strings decoded, numbers as written, booleans, null and missing empty, objects as their JSON text"
    )
    func ndjsonValues() throws {
        let keep = try KeptFields(parsing: "s,n,t,z,o,a,missing,e")
        let line = Array(
            #"{"s":"caf\u00e9 \"q\"","n":-1.5e3,"t":true,"z":null,"o":{"k":[1,"x"]},"a":[ 1 , 2 ],"e":"\u202e","s":"second"}"#
                .utf8)
        let values = keep.values(ofJSONLine: line, range: line.indices)
        #expect(values.values == ["café \"q\"", "-1.5e3", "true", "", #"{"k":[1,"x"]}"#, "[ 1 , 2 ]", "", "\u{202E}"])
        let broken = Array(#"{"s":"x""#.utf8)
        #expect(keep.values(ofJSONLine: broken, range: broken.indices).values == Array(repeating: "", count: 8))
    }

    @Test("the NDJSON parser puts the values into valid and invalid records alike")
    func ndjsonParser() throws {
        var parser = NDJSONRecordParser(defaults: CampaignDefaults(topic: try Topic(validating: "com.example.app")))
        parser.keep = try KeptFields(parsing: "user_id,device_id")
        let valid = Array(#"{"token":"\#(Support.token(1))","payload":{"aps":{}},"user_id":42,"device_id":"d-1"}"#.utf8)
        let record = parser.parse(valid, range: valid.indices, key: RecordKey(fileIndex: 0, line: 1))
        #expect(record.notification != nil)
        #expect(record.kept == KeptValues(names: ["user_id", "device_id"], values: ["42", "d-1"]))
        let invalid = Array(#"{"token":"zz","payload":{"aps":{}},"user_id":"u7"}"#.utf8)
        let bad = parser.parse(invalid, range: invalid.indices, key: RecordKey(fileIndex: 0, line: 2))
        #expect(bad.error != nil)
        #expect(bad.kept?.values == ["u7", ""])
    }

    @Test("CSV: the columns' cells are the values; a kept field that is no column is refused, naming it")
    func csvParser() throws {
        let template = try PayloadTemplate(bytes: Array(#"{"aps":{"alert":"{{name}}"}}"#.utf8))
        let header = ["token", "name", "User_ID", "device_id"]
        #expect(throws: PipelineError.self) {
            _ = try CSVRecordParser(
                header: header, defaults: CampaignDefaults(), template: template,
                keep: try KeptFields(parsing: "user_id,phone"))
        }
        do {
            _ = try CSVRecordParser(
                header: header, defaults: CampaignDefaults(), template: template, keep: try KeptFields(parsing: "phone")
            )
        } catch {
            #expect("\(error)".contains("'phone'"))
        }
        let csv = "token,name,User_ID,device_id\n\(Support.token(1)),Ann,=1+2,\"d,1\"\n"
        let reader = CSVReader(source: MemoryByteSource(Array(csv.utf8)))
        let headerRow = try #require(try reader.next())
        let names = (0..<headerRow.fieldCount).map { reader.fieldText($0) }
        var parser = try CSVRecordParser(
            header: names, defaults: CampaignDefaults(topic: try Topic(validating: "com.example.app")),
            template: template,
            keep: try KeptFields(parsing: "user_id,device_id"))
        let row = try #require(try reader.next())
        let record = parser.parse(reader, record: row, fileIndex: 0)
        #expect(record.notification != nil)
        #expect(record.kept?.values == ["=1+2", "d,1"])
    }

    static let awkward = KeptValues(
        names: ["user_id", "device_id", "note"],
        values: ["=HYPERLINK(\"http://evil\",\"x\")", "d\u{1B}[31m\u{7F}\u{85}\u{202E}\u{2066}1", ""])

    static func record(line: Int, kept: KeptValues?) -> ResultRecord {
        var record = ResultRecord(
            key: RecordKey(fileIndex: 0, line: line), outcome: .prune, token: Support.token(line),
            topic: "com.example.app",
            status: 410, reason: "Unregistered", apnsID: nil, timestamp: 1_767_225_600_123, attempts: 1)
        record.kept = kept
        return record
    }

    static func written(_ records: [ResultRecord], _ format: ResultFormat, keptNames: [String] = []) throws -> [UInt8] {
        let sink = MemoryByteSink()
        let writer = ResultWriter(
            sink: sink, format: format, inputFiles: InputFileList(["c.ndjson"]), keptNames: keptNames)
        for record in records { try writer.write(record) }
        try writer.flush()
        return sink.bytes
    }

    static func read(_ bytes: [UInt8]) throws -> [ResultRecord] {
        let reader = try ResultReader(source: MemoryByteSource(bytes, chunkSize: 7), name: "results")
        var read: [ResultRecord] = []
        while let record = try reader.next() { read.append(record) }
        return read
    }

    /// Bytes a terminal acts on: C0 (but the line feed that ends a line), DEL, C1, and the bidi controls.
    static func rawControls(_ bytes: [UInt8]) -> [Unicode.Scalar] {
        String(decoding: bytes, as: UTF8.self).unicodeScalars.filter { $0 != "\n" && PrintableText.needsEscaping($0) }
    }

    @Test(
        "NDJSON result lines carry a kept object that reads back exactly, with no raw control byte; lines without stay as they were"
    )
    func ndjsonResultLines() throws {
        let records = [Self.record(line: 1, kept: Self.awkward), Self.record(line: 2, kept: nil)]
        let bytes = try Self.written(records, .ndjson)
        #expect(Self.rawControls(bytes).isEmpty)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(
            text.contains(
                #","kept":{"user_id":"=HYPERLINK(\"http://evil\",\"x\")","device_id":"d\u001b[31m\u007f\u0085\u202e\u20661","note":""}}"#
            ))
        #expect(!text.split(separator: "\n")[1].contains("kept"))
        #expect(try Self.read(bytes) == records)
        let line = try #require(text.split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect((object["kept"] as? [String: String])?["device_id"] == Self.awkward.values[1])
    }

    @Test(
        "CSV result files: a column per kept field after payload, cells neutralised (formula quoted behind ', controls escaped), stable when read and written again"
    )
    func csvResultLines() throws {
        let names = Self.awkward.names
        let bytes = try Self.written(
            [Self.record(line: 1, kept: Self.awkward), Self.record(line: 2, kept: nil)], .csv, keptNames: names)
        #expect(Self.rawControls(bytes).isEmpty)
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines[0] == Substring((ResultRecord.fieldNames + names).joined(separator: ",")))
        #expect(lines[1].hasSuffix(#","'=HYPERLINK(""http://evil"",""x"")",d\u{1B}[31m\u{7F}\u{85}\u{202E}\u{2066}1,"#))
        #expect(lines[2].hasSuffix(",,,"))
        let read = try Self.read(bytes)
        let neutralised = KeptValues(
            names: names,
            values: [
                "'=HYPERLINK(\"http://evil\",\"x\")", "d\\u{1B}[31m\\u{7F}\\u{85}\\u{202E}\\u{2066}1", "",
            ])
        #expect(read[0].kept == neutralised)
        #expect(try Self.written(read, .csv, keptNames: names) == bytes, "a neutralised cell is neutralised already")
    }

    @Test(
        "prune rows: CSV gets the kept columns after the others (union over entries), NDJSON a member each; text stays one token a line"
    )
    func pruneRows() throws {
        var list = PruneList()
        list.add(Self.record(line: 1, kept: Self.awkward))
        list.add(Self.record(line: 2, kept: KeptValues(names: ["user_id", "shard"], values: ["u2", "7"])))
        list.add(Self.record(line: 3, kept: nil))
        func written(_ format: PruneList.OutputFormat) throws -> String {
            let sink = MemoryByteSink()
            try PruneList.write(list.entries, format: format, to: sink)
            #expect(Self.rawControls(sink.bytes).isEmpty, "\(format)")
            return String(decoding: sink.bytes, as: UTF8.self)
        }
        let csv = try written(.csv).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(csv[0] == Substring(PruneList.csvHeader + ",user_id,device_id,note,shard"))
        #expect(csv[1].hasSuffix(#","'=HYPERLINK(""http://evil"",""x"")",d\u{1B}[31m\u{7F}\u{85}\u{202E}\u{2066}1,,"#))
        #expect(csv[2].hasSuffix(",u2,,,7"))
        #expect(csv[3].hasSuffix(",,,,"))
        let ndjson = try written(.ndjson).split(separator: "\n")
        let first = try #require(try JSONSerialization.jsonObject(with: Data(ndjson[0].utf8)) as? [String: Any])
        #expect(first["user_id"] as? String == Self.awkward.values[0])
        #expect(first["device_id"] as? String == Self.awkward.values[1])
        #expect(first["note"] as? String == "", "an empty kept value is written, unlike the other columns'")
        #expect(first["environment"] == nil)
        #expect(!ndjson[2].contains("user_id"))
        #expect(
            try written(.text).split(separator: "\n")
                == [Support.token(1), Support.token(2), Support.token(3)].map { Substring($0) })
    }

    @Test("a stopped campaign's CSV result file, reopened, keeps its kept columns and values")
    func stoppedCampaignKeepsColumns() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kept-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/results.csv"
        let names = ["user_id", "device_id"]
        var notSent = Self.record(line: 2, kept: KeptValues(names: names, values: ["u2", "d2"]))
        notSent.outcome = .notSent
        let delivered = Self.record(line: 1, kept: KeptValues(names: names, values: ["u1", "d1"]))
        let bytes = try Self.written([delivered, notSent], .csv, keptNames: names)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let removed = try StoppedCampaign.reopen(
            resultsPath: path, inputs: ["c.ndjson"], format: .csv, keptNames: names)
        #expect(removed == 1)
        let read = try Self.read(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(read.map(\.kept) == [delivered.kept])
    }

    @Test(
        "the NDJSON writers escape DEL, C1 controls, the separators and the bidi controls in every string (a file path here)"
    )
    func ndjsonEscapesEveryControl() throws {
        var out: [UInt8] = []
        JSONText.appendString(
            "a\u{7F}b\u{80}\u{9F}\u{A0}é\u{2028}\u{202A}\u{202E}\u{2066}\u{2069}\u{200E}\u{61C}€", to: &out)
        #expect(
            String(decoding: out, as: UTF8.self)
                == #""a\u007fb\u0080\u009f"# + "\u{A0}é" + #"\u2028\u202a\u202e\u2066\u2069\u200e\u061c"# + "€\"")
        let bytes = try Self.written([Self.record(line: 1, kept: nil)], .ndjson)
        #expect(Self.rawControls(bytes).isEmpty)
        let sink = MemoryByteSink()
        let writer = ResultWriter(sink: sink, format: .ndjson, inputFiles: InputFileList(["c\u{202E}lmth.ndjson"]))
        try writer.write(Self.record(line: 1, kept: nil))
        try writer.flush()
        #expect(Self.rawControls(sink.bytes).isEmpty)
        #expect(try Self.read(sink.bytes).count == 1)
    }
}
