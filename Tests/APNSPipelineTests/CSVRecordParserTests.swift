import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

@Suite("CSV campaigns")
struct CSVRecordParserTests {
    typealias Support = PipelineTestSupport

    private func read(_ csv: String, template: String? = #"{"aps":{"alert":"Hi {{name}}","badge":{{badge}}}}"#) throws
        -> [CampaignRecord]
    {
        let directory = try Support.temporaryDirectory()
        let path = try Support.write(csv, to: "c.csv", in: directory)
        var options = CampaignReaderOptions(defaults: Support.defaults)
        options.template = try template.map { try PayloadTemplate(bytes: Array($0.utf8)) }
        return try Support.readAll([CampaignInput(path: path)], options: options)
    }

    @Test("rows fill the template; header columns set headers; line numbers follow embedded newlines")
    func rows() throws {
        let t1 = Support.token(1)
        let t2 = Support.token(2)
        let t3 = Support.token(3)
        let csv =
            "\u{FEFF}Token,name,badge,push_type,priority,collapse_id\r\n"
            + "\(t1),\"Ann \"\"A\"\"\",3,,,\r\n"
            + "\(t2),\"multi\nline\",-1.5,background,5,c1\r\n"
            + "\(t3),Bob,7,,,\r\n"
        let records = try read(
            csv, template: #"{"aps":{"alert":"Hi {{name}}","badge":{{badge}}},"bg":"{{push_type}}"}"#)
        #expect(records.map(\.key.line) == [2, 3, 5])
        let first = try #require(records[0].notification)
        #expect(
            String(decoding: first.payload, as: UTF8.self) == #"{"aps":{"alert":"Hi Ann \"A\"","badge":3},"bg":""}"#)
        #expect(first.pushType == .alert)
        let second = try #require(records[1].notification)
        #expect(
            String(decoding: second.payload, as: UTF8.self)
                == #"{"aps":{"alert":"Hi multi\nline","badge":-1.5},"bg":"background"}"#)
        #expect(second.pushType == .background)
        #expect(second.priority == .powerAware)
        #expect(second.collapseID?.value == "c1")
        #expect(records[2].notification?.token.hex == t3)
    }

    @Test("row problems: ragged, bad token, unterminated quote, invalid UTF-8, too long")
    func problems() throws {
        let t1 = Support.token(1)
        var bytes = Array("token,name,badge\n\(t1),a\nzz,b,1\n\(t1),\"".utf8) + [0xFF] + Array("\",1\n".utf8)
        bytes += Array("\(t1),\(String(repeating: "w", count: 70_000)),1\n\(t1),ok,1\n\(t1),\"open,1\n".utf8)
        let directory = try Support.temporaryDirectory()
        let path = try Support.write(bytes, to: "p.csv", in: directory)
        var options = CampaignReaderOptions(defaults: Support.defaults)
        options.template = try PayloadTemplate(bytes: Array(#"{"a":"{{name}}","b":{{badge}}}"#.utf8))
        let records = try Support.readAll([CampaignInput(path: path)], options: options)
        #expect(records.map(\.key.line) == [2, 3, 4, 5, 6, 7])
        #expect(
            records.map(\.code) == [
                .csvColumnCount, .tokenNotHex, .recordInvalidUTF8, .recordTooLong, nil, .csvMalformed,
            ])
        #expect(records[0].tokenText == t1)
        #expect(records[1].tokenText == "zz")
    }

    @Test("a collapse_id cell with a blank at either end is CollapseIdInvalid, the row still gets its line")
    func blankCollapseIDCell() throws {
        let t1 = Support.token(1)
        let csv = "token,collapse_id,payload\n\(t1), promo,{}\n\(t1),\"promo\t\",{}\n\(t1),pro mo,{}\n"
        let records = try read(csv, template: nil)
        #expect(records.map(\.key.line) == [2, 3, 4])
        #expect(records.map(\.code) == [.collapseIDInvalid, .collapseIDInvalid, nil])
        #expect(records[2].notification?.collapseID?.value == "pro mo")
    }

    @Test("a payload column is used as it stands when the cell is not empty")
    func payloadColumn() throws {
        let t1 = Support.token(1)
        let csv = "token,payload\n\(t1),\"{ \"\"aps\"\" : {} }\"\n\(t1),\n\(t1),\"[1]\"\n"
        let records = try read(csv, template: nil)
        #expect(records[0].notification?.payload == Array(#"{ "aps" : {} }"#.utf8))
        #expect(records[1].code == .payloadMissing)
        #expect(records[2].code == .payloadNotObject)
    }

    @Test(
        "headers that cannot work fail the file before any record",
        arguments: [
            ("name,badge\nx,1\n", #"{"a":1}"#),
            ("token,name\nx,1\n", #"{"a":"{{name}}","b":{{badge}}}"#),
            ("token,name\nx,1\n", nil as String?),
            ("", #"{"a":1}"#),
        ])
    func badHeaders(csv: String, template: String?) throws {
        #expect(throws: PipelineError.self) { try read(csv, template: template) }
    }

    @Test("the token column name is configurable; matching is case-insensitive")
    func tokenColumn() throws {
        let t1 = Support.token(1)
        let directory = try Support.temporaryDirectory()
        let path = try Support.write("Device_Token,x\n\(t1),1\n", to: "t.csv", in: directory)
        var options = CampaignReaderOptions(defaults: Support.defaults, tokenColumn: "device_token")
        options.template = try PayloadTemplate(bytes: Array(#"{"x":{{x}}}"#.utf8))
        let records = try Support.readAll([CampaignInput(path: path)], options: options)
        #expect(records.first?.notification?.payload == Array(#"{"x":1}"#.utf8))
    }
}
