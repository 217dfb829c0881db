import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

/// CSV as spreadsheet programs export it: the delimiter detected from the header (`,` `;` tab) or given, the
/// message for a header without the token column, CSV read as NDJSON, and empty cells where the template has a
/// bare placeholder (docs/FILES.md, "CSV and payload templates").
@Suite("CSV as spreadsheets write it")
struct CSVSpreadsheetTests {
    typealias Support = PipelineTestSupport

    private static func detect(_ header: String, tokenColumn: String = "token") -> CSVDelimiter {
        let bytes = Array(header.utf8)
        return CSVDelimiter.detect(in: bytes, range: 0..<bytes.count, tokenColumn: tokenColumn)
    }

    @Test(
        "detection: the delimiter that splits the header into the most fields outside quotes",
        arguments: [
            ("token,a,b\n", CSVDelimiter.comma), ("token;first_name;badge\r\n", .semicolon), ("token\tname\n", .tab),
            ("\"a;b\",token\n", .comma), ("name;\"x,y\";token\n", .semicolon), ("a;b;c,d\n", .semicolon),
            ("token\n", .comma), ("", .comma), ("token;a\nx,y,z,w,v\n", .semicolon),
            ("\"multi\nline;\";token;x\n", .semicolon),
        ])
    func detection(header: String, expected: CSVDelimiter) {
        #expect(Self.detect(header) == expected, "\(header.debugDescription)")
    }

    @Test("detection prefers a split with the token column, by the name --token-column gives")
    func detectionPrefersTheTokenColumn() {
        #expect(Self.detect("token;first,last\n") == .semicolon)
        #expect(Self.detect("a,b,c;token\n") == .semicolon)
        #expect(Self.detect("a,b,c;token\n", tokenColumn: "id") == .comma)
        #expect(Self.detect("device;id\tpush_token\n", tokenColumn: "push_token") == .tab)
        #expect(Self.detect(" Token ;x\n") == .semicolon, "names compared trimmed, case-insensitively")
    }

    @Test(
        "--csv-delimiter values",
        arguments: [
            (",", CSVDelimiter.comma), (";", .semicolon), ("tab", .tab), ("TAB", .tab), ("\\t", .tab), ("\t", .tab),
            ("comma", .comma), ("semicolon", .semicolon), ("x", nil), ("", nil), (",,", nil), ("|", nil),
        ] as [(String, CSVDelimiter?)])
    func optionValues(text: String, expected: CSVDelimiter?) {
        #expect(CSVDelimiter(option: text) == expected)
        if let expected { #expect(CSVDelimiter(option: expected.optionValue) == expected) }
    }

    @Test("the reader detects past a BOM, over reads smaller than the header", arguments: [1, 3, 7, 64])
    func readerDetects(readSize: Int) throws {
        let bytes = Array("\u{FEFF}token;name;badge\r\nab;\"x; y\";3\r\ncd;\"q\"\"\";\r\n".utf8)
        let reader = CSVReader(source: MemoryByteSource(bytes, chunkSize: readSize), chunkSize: 64, delimiter: nil)
        var rows: [[String]] = []
        while let record = try reader.next() { rows.append((0..<record.fieldCount).map { reader.fieldText($0) }) }
        #expect(reader.delimiter == .semicolon)
        #expect(rows == [["token", "name", "badge"], ["ab", "x; y", "3"], ["cd", "q\"", ""]])
    }

    @Test("a header longer than the reader's chunk: detected on what the chunk holds")
    func headerLongerThanTheChunk() throws {
        let header = (0..<40).map { "column\($0)" }.joined(separator: "\t") + "\ttoken\n"
        let reader = CSVReader(
            source: MemoryByteSource(Array((header + "1\t2\n").utf8), chunkSize: 16), chunkSize: 64, delimiter: nil)
        let first = try #require(try reader.next())
        #expect(reader.delimiter == .tab)
        #expect(first.fieldCount == 41)
    }

    @Test("a given delimiter is used as given; a comma file keeps reading as before")
    func givenDelimiter() throws {
        let bytes = Array("a;b,c\n".utf8)
        let semicolon = CSVReader(source: MemoryByteSource(bytes), delimiter: .semicolon)
        #expect(try semicolon.next()?.fieldCount == 2)
        let comma = CSVReader(source: MemoryByteSource(bytes))
        #expect(try comma.next()?.fieldCount == 2)
        #expect(comma.fieldText(0) == "a;b")
    }

    private func read(
        _ csv: String, name: String = "c.csv", template: String?, delimiter: CSVDelimiter? = nil,
        tokenColumn: String = "token"
    ) throws -> [CampaignRecord] {
        let directory = try Support.temporaryDirectory()
        let path = try Support.write(csv, to: name, in: directory)
        var options = CampaignReaderOptions(defaults: Support.defaults, tokenColumn: tokenColumn)
        options.template = try template.map { try PayloadTemplate(bytes: Array($0.utf8)) }
        options.csvDelimiter = delimiter
        return try Support.readAll([CampaignInput(path: path)], options: options)
    }

    @Test("a semicolon file with a BOM, CRLF and a quoted ';' reads as the comma file does")
    func semicolonCampaign() throws {
        let t1 = Support.token(1)
        let t2 = Support.token(2)
        let template = #"{"aps":{"alert":"Hi {{first_name}}","badge":{{badge}}}}"#
        let semicolon = try read(
            "\u{FEFF}token;first_name;badge\r\n\(t1);\"Li; Bo\";3\r\n\(t2);Ann;0\r\n", template: template)
        let comma = try read("token,first_name,badge\n\(t1),Li; Bo,3\n\(t2),Ann,0\n", template: template)
        #expect(semicolon.map(\.code) == [nil, nil])
        #expect(semicolon.map { $0.notification?.payload } == comma.map { $0.notification?.payload })
        #expect(
            String(decoding: semicolon[0].notification?.payload ?? [], as: UTF8.self)
                == #"{"aps":{"alert":"Hi Li; Bo","badge":3}}"#)
    }

    @Test("each file of a run is detected on its own")
    func detectionPerFile() throws {
        let directory = try Support.temporaryDirectory()
        let t1 = Support.token(1)
        let t2 = Support.token(2)
        let a = try Support.write("token;n\n\(t1);1\n", to: "a.csv", in: directory)
        let b = try Support.write("n,token\n2,\(t2)\n", to: "b.csv", in: directory)
        var options = CampaignReaderOptions(defaults: Support.defaults)
        options.template = try PayloadTemplate(bytes: Array(#"{"n":{{n}}}"#.utf8))
        let records = try Support.readAll([CampaignInput(path: a), CampaignInput(path: b)], options: options)
        #expect(records.map { $0.notification?.token.hex } == [t1, t2])
    }

    @Test("a header without the token column names the columns that look like one and --token-column")
    func noTokenColumnMessages() {
        func message(_ header: [String], _ first: [String]? = nil, delimiter: CSVDelimiter? = .comma) -> String {
            CSVRecordParser.noTokenColumn(header: header, tokenColumn: "token", firstRow: first, delimiter: delimiter)
                .detail
        }
        #expect(
            message(["device_token", "name"]).hasSuffix(
                "'device_token' looks like it: give --token-column device_token"))
        #expect(
            message(["Push_Token", "apns_token", "n"]).contains("'Push_Token', 'apns_token'; give --token-column NAME"))
        let hex = Support.token(4)
        #expect(
            message(["id", "name"], [hex.uppercased(), "x"]).hasSuffix("'id' looks like it: give --token-column id"))
        #expect(message(["id", "name"], [String(hex.prefix(62)), "x"]).hasSuffix("with --token-column NAME"))
        #expect(message(["id", "name"], ["x" + hex, "y"]).hasSuffix("with --token-column NAME"))
        #expect(message(["token;name"], delimiter: .comma).hasSuffix("the names hold ';': give --csv-delimiter ';'"))
        #expect(message(["id", "name"]).hasPrefix("no 'token' column in the header (columns: 'id', 'name')"))
    }

    @Test("through the reader: the file is named, and a hex column found in the first row")
    func noTokenColumnThroughTheReader() throws {
        #expect {
            _ = try read("device_token;first_name\n\(Support.token(1));Ann\n", template: #"{"a":"{{first_name}}"}"#)
        } throws: { error in
            let text = "\(error)"
            return (error as? PipelineError)?.kind == .csvHeaderInvalid && text.contains("c.csv: no 'token' column")
                && text.contains("--token-column device_token")
        }
        #expect {
            _ = try read("id,name\n\(Support.token(1)),Ann\n", template: #"{"a":"{{name}}"}"#)
        } throws: { error in "\(error)".contains("'id' looks like it: give --token-column id") }
        #expect {
            _ = try read("token;name\n\(Support.token(1));Ann\n", template: #"{"a":"{{name}}"}"#, delimiter: .comma)
        } throws: { error in "\(error)".contains("give --csv-delimiter ';'") }
        let records = try read(
            "device_token\tname\n\(Support.token(1))\tAnn\n", template: #"{"a":"{{name}}"}"#,
            tokenColumn: "device_token")
        #expect(records.map(\.code) == [nil])
    }

    @Test("a UTF-16 file (Excel's Unicode Text) is refused with the fix, not read as garbled columns")
    func utf16() throws {
        let directory = try Support.temporaryDirectory()
        let text = "token\tname\r\n\(Support.token(1))\tAnn\r\n"
        let path = try Support.write(
            [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, to: "u.csv", in: directory)
        var options = CampaignReaderOptions(defaults: Support.defaults)
        options.template = try PayloadTemplate(bytes: Array(#"{"a":"{{name}}"}"#.utf8))
        #expect {
            _ = try Support.readAll([CampaignInput(path: path)], options: options)
        } throws: { error in
            (error as? PipelineError)?.kind == .csvHeaderInvalid && "\(error)".contains("UTF-16")
                && "\(error)".contains("CSV UTF-8")
        }
    }

    @Test(
        "an empty or non-scalar cell for a bare placeholder is TemplateValueInvalid naming the column; the run goes on")
    func emptyNumericCell() throws {
        let t1 = Support.token(1)
        let t2 = Support.token(2)
        let t3 = Support.token(3)
        let csv = "token;name;badge;sound\n\(t1);Ann;;true\n\(t2);Bo;2;false\n\(t3);Cy;two;true\n\(t1);Di;1;\n"
        let records = try read(csv, template: #"{"aps":{"alert":"Hi {{name}}","badge":{{badge}}},"s":{{sound}}}"#)
        #expect(records.map(\.key.line) == [2, 3, 4, 5])
        #expect(records.map(\.code) == [.templateValueInvalid, nil, .templateValueInvalid, .templateValueInvalid])
        #expect(
            records[0].error?.detail.hasPrefix("empty value in column 'badge' where the template needs a number")
                == true)
        #expect(records[0].tokenText == t1)
        #expect(
            records[2].error?.detail.hasPrefix("value 'two' in column 'badge' is not a number, true, false or null")
                == true)
        #expect(records[3].error?.detail.hasPrefix("empty value in column 'sound'") == true)
        #expect(
            String(decoding: records[1].notification?.payload ?? [], as: UTF8.self)
                == #"{"aps":{"alert":"Hi Bo","badge":2},"s":false}"#)
    }

    @Test(
        "NDJSON whose first line looks like CSV: that line's error says --input-format csv",
        arguments: [
            ("token,name", true), ("\u{FEFF}token;name", true), ("\"token\"\t\"name\"", true), ("Token", true),
            ("5,6", true), ("hello", false), ("[1,2]", false), ("{\"token\":1,", false), ("  {", false),
        ])
    func ndjsonThatIsCSV(line: String, hinted: Bool) throws {
        let records = try read(line + "\n\(Support.token(1)),Ann\n", name: "c.ndjson", template: nil)
        #expect(records.count == 2)
        #expect(records[0].code != nil)
        #expect(
            records[0].error?.detail.contains("give --input-format csv") == hinted, "\(records[0].error?.detail ?? "")")
        #expect(records[1].error?.detail.contains("--input-format") == false, "only the first line says it")
    }

    @Test("validate's reading (checkRecords) and send's (nextRecord) give the same records, details and all")
    func sameForValidateAndSend() throws {
        let directory = try Support.temporaryDirectory()
        let t1 = Support.token(1)
        let t2 = Support.token(2)
        let ndjson = try Support.write("token;name\n\(t1);Ann\n", to: "c.ndjson", in: directory)
        let csv = try Support.write(
            "\u{FEFF}token;name;badge\r\n\(t1);\"A;n\";\r\n\(t2);Bo;x\r\n\(t2);Bo;1\r\n",
            to: "c.csv", in: directory)
        let inputs = [CampaignInput(path: ndjson), CampaignInput(path: csv)]
        let options = CampaignReaderCheckTests.options(
            template: try PayloadTemplate(bytes: Array(#"{"a":"{{name}}","b":{{badge}}}"#.utf8)))
        let (expected, _, _) = try CampaignReaderCheckTests.read(inputs, options)
        let (checked, _, _) = try CampaignReaderCheckTests.check(inputs, options)
        #expect(checked == expected)
        #expect(expected.count == 5)
        #expect(expected.map(\.description).filter { $0.contains("--input-format csv") }.count == 1)
        #expect(expected.map(\.description).filter { $0.contains("TemplateValueInvalid") }.count == 2)
    }

    @Test("no topic anywhere and a first line that looks like CSV: the error says --input-format csv too")
    func noTopicMessage() throws {
        let directory = try Support.temporaryDirectory()
        let path = try Support.write("token,name\n\(Support.token(1)),Ann\n", to: "c.txt", in: directory)
        let reader = CampaignReader(
            inputs: [CampaignInput(path: path)], options: CampaignReaderOptions(defaults: CampaignDefaults()))
        #expect {
            try reader.prepareToStart()
        } throws: { error in
            (error as? PipelineError)?.kind == .campaignSettingMissing && "\(error)".contains("give --input-format csv")
        }
    }
}
