import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// `CampaignReader.checkRecords` (what `validate` reads with: no notification built, a stored-form token left in
/// the line) hands on exactly what `nextRecord` reads: the same records in the same order, the same valid pairs,
/// the same errors, the same shard counts, over hand-written edge cases and thousands of mutated lines.
@Suite("Campaign reader: checking records without building them")
struct CampaignReaderCheckTests {
    typealias Support = PipelineTestSupport

    /// One record as both ways of reading must report it.
    enum Entry: Equatable, CustomStringConvertible {
        case valid(RecordKey, hex: String, topic: String)
        case invalid(RecordKey, InputError.Code, detail: String, tokenText: String?, topicText: String?)

        var description: String {
            switch self {
            case .valid(let key, let hex, let topic): return "\(key.fileIndex):\(key.line) valid \(hex) \(topic)"
            case .invalid(let key, let code, let detail, let token, let topic):
                return
                    "\(key.fileIndex):\(key.line) \(code.rawValue) \(detail) token=\(token ?? "-") topic=\(topic ?? "-")"
            }
        }
    }

    /// What `nextRecord` reads, and the reader's counts after it.
    static func read(_ inputs: [CampaignInput], _ options: CampaignReaderOptions) throws -> ([Entry], Int, Int) {
        let reader = CampaignReader(inputs: inputs, options: options)
        var entries: [Entry] = []
        while let record = try reader.nextRecord() {
            switch record.content {
            case .notification(let notification):
                entries.append(.valid(record.key, hex: notification.token.hex, topic: notification.topic.value))
            case .invalid(let error, let tokenText, let topicText):
                entries.append(
                    .invalid(record.key, error.code, detail: error.detail, tokenText: tokenText, topicText: topicText))
            }
        }
        return (entries, reader.recordsRead, reader.recordsInOtherShards)
    }

    /// What `checkRecords` hands on, and the reader's counts after it.
    static func check(_ inputs: [CampaignInput], _ options: CampaignReaderOptions) throws -> ([Entry], Int, Int) {
        let reader = CampaignReader(inputs: inputs, options: options)
        var entries: [Entry] = []
        try reader.checkRecords(
            valid: { key, bytes, hex, topic in
                entries.append(.valid(key, hex: String(decoding: bytes[hex], as: UTF8.self), topic: topic.value))
            },
            invalid: { key, error, tokenText, topicText in
                entries.append(
                    .invalid(key, error.code, detail: error.detail, tokenText: tokenText, topicText: topicText))
            })
        return (entries, reader.recordsRead, reader.recordsInOtherShards)
    }

    /// Lines that reach every branch of the checks: token forms, each header, payload and template rules, broken
    /// JSON and UTF-8, members given twice or as null.
    static let edgeLines: [String] = {
        let token = Support.token(7)
        let upper = token.uppercased()
        let grouped =
            "<"
            + stride(from: 0, to: 64, by: 8).map { offset -> String in
                let start = token.index(token.startIndex, offsetBy: offset)
                return String(token[start..<token.index(start, offsetBy: 8)])
            }.joined(separator: " ") + ">"
        let escaped = #"\u00"# + String(format: "%02x", token.utf8.first ?? 0) + String(token.dropFirst())
        let payload = #""payload":{"aps":{"alert":"hi"}}"#
        return [
            #"{"token":"\#(token)",\#(payload)}"#,
            #"{"token":"\#(upper)",\#(payload)}"#,
            #"{"token":"\#(grouped)",\#(payload)}"#,
            #"{"token":"\#(escaped)",\#(payload)}"#,
            #"{"token":"\#(token)","topic":"com.example.other",\#(payload)}"#,
            #"{"token":"\#(token)","topic":"com.exa\u006dple.app",\#(payload)}"#,
            #"{"token":"\#(token)","topic":"bad topic",\#(payload)}"#,
            #"{"token":"\#(token)","push_type":"background","payload":{"aps":{"content-available":1}}}"#,
            #"{"token":"\#(token)","push_type":"voip",\#(payload)}"#,
            #"{"token":"\#(token)","push_type":"nonsense",\#(payload)}"#,
            #"{"token":"\#(token)","priority":5,"expiration":"1700000000",\#(payload)}"#,
            #"{"token":"\#(token)","priority":11,\#(payload)}"#,
            #"{"token":"\#(token)","collapse_id":"group-1","apns_id":"123e4567-e89b-12d3-a456-426614174000",\#(payload)}"#,
            #"{"token":"\#(token)","apns_id":"not-a-uuid",\#(payload)}"#,
            #"{"token":"\#(token)","collapse_id":"\ud800",\#(payload)}"#,
            #"{"token":"\#(token)","vars":{"name":"Ann","badge":3,"extra":{"k":[1,2]}}}"#,
            #"{"token":"\#(token)","vars":{"name":"Ann"}}"#,
            #"{"token":"\#(token)","vars":{"n\u0061me":"Bo","badge":"x","extra":null}}"#,
            #"{"token":"\#(token)"}"#,
            #"{"token":"\#(token)","payload":[1]}"#,
            #"{"token":"\#(token)","payload":{"aps":{"alert":"\#(String(repeating: "x", count: 4100))"}}}"#,
            #"{"token":"\#(token)","token":"\#(token)",\#(payload)}"#,
            #"{"token":null,\#(payload)}"#,
            #"{"token":"\#(token)","topic":null,\#(payload)}"#,
            #"{"token":12,\#(payload)}"#,
            #"{"token":"abc",\#(payload)}"#,
            #"{"token":"\#(token)x",\#(payload)}"#,
            #"{"token":"\#(token.dropLast())",\#(payload)}"#,
            #"{"token":"\#(token)\#(token)\#(token)\#(token)\#(token)\#(token)\#(token)",\#(payload)}"#,
            #"{\#(payload)}"#,
            #"{"token":"\#(token)",\#(payload)"#,
            #"[1,2]"#,
            "   ",
            #"{"token":"\#(token)","payload":{"aps":{"alert":"caf\#u{E9}"}}}"#,
        ]
    }()

    static let template: PayloadTemplate? = try? PayloadTemplate(
        bytes: Array(#"{"aps":{"alert":"Hi {{name}}","badge":{{badge}}},"extra":{{extra}}}"#.utf8))

    /// Writes `lines` (with a byte-order mark, CRLF and invalid UTF-8 lines mixed in) and the same campaign as CSV.
    static func inputs(_ lines: [String], in directory: URL) throws -> [CampaignInput] {
        var bytes = Array("\u{FEFF}".utf8)
        for (index, line) in lines.enumerated() {
            bytes += Array(line.utf8)
            if index % 5 == 3 { bytes += [0xC3, 0x28] }  // invalid UTF-8 inside some lines
            bytes += Array((index % 3 == 0 ? "\r\n" : "\n").utf8)
        }
        let ndjson = try Support.write(bytes, to: "check.ndjson", in: directory)
        let token = Support.token(3)
        let csv = try Support.write(
            "token,topic,payload,name,badge,extra\n\(token),,\"{\"\"aps\"\":{}}\",,,\n\(token.uppercased()),,,Al,1,2\n"
                + "zz,,,Al,1,2\n\(token),bad topic,,Al,1,2\n\(token),,,Al,1\n",
            to: "check.csv", in: directory)
        return [CampaignInput(path: ndjson), CampaignInput(path: csv)]
    }

    static func options(shard: ShardSelector = .all, template: PayloadTemplate? = template) -> CampaignReaderOptions {
        var options = CampaignReaderOptions(defaults: Support.defaults, template: template, shard: shard)
        options.maximumRecordLength = 2_000  // the 4,100-byte payload's line is too long for the reader
        options.keepsPayloads = false
        return options
    }

    @Test(
        "every edge case: the same records, pairs, errors and counts, with and without a template, in each of 2 shards",
        arguments: [nil, 0, 1] as [Int?], [true, false])
    func edgeCases(shardIndex: Int?, withTemplate: Bool) throws {
        let directory = try Support.temporaryDirectory()
        // Tokens enough for each shard to have valid records too.
        let spread = (0..<8).map { #"{"token":"\#(Support.token($0))","payload":{}}"# }
        let inputs = try Self.inputs(Self.edgeLines + spread, in: directory)
        let shard = try shardIndex.map { try ShardSelector(index: $0, count: 2) } ?? .all
        let options = Self.options(shard: shard, template: withTemplate ? Self.template : nil)
        let (expected, read, others) = try Self.read(inputs, options)
        let (checked, checkedRead, checkedOthers) = try Self.check(inputs, options)
        #expect(checked == expected)
        #expect(checkedRead == read && checkedOthers == others)
        // The cases reach both outcomes, and both token forms of a valid record.
        let valid = expected.filter { if case .valid = $0 { return true } else { return false } }
        #expect(valid.count >= (shardIndex == nil ? 8 : 1))
        #expect(expected.count - valid.count >= (shardIndex == nil ? 15 : 1))
        if shardIndex == nil { #expect(others == 0) } else { #expect(others > 0) }
    }

    @Test("thousands of mutated lines: the same records, pairs and errors")
    func mutatedLines() throws {
        var random = SplitMix64(seed: 0xC0FFEE)
        let replacements = Array(#""\{}[],:0aAF u-"#.utf8) + [0xC3, 0x80, 0x00, 0x09]
        var lines: [String] = []
        for _ in 0..<3_000 {
            let base = Self.edgeLines[Int(random.next() % UInt64(Self.edgeLines.count))]
            var bytes = Array(base.utf8)
            guard !bytes.isEmpty else { continue }
            for _ in 0...(random.next() % 3) {
                let at = Int(random.next() % UInt64(bytes.count))
                bytes[at] = replacements[Int(random.next() % UInt64(replacements.count))]
            }
            lines.append(String(decoding: bytes.filter { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self))
        }
        let directory = try Support.temporaryDirectory()
        let inputs = try Self.inputs(lines, in: directory)
        let (expected, _, _) = try Self.read(inputs, Self.options())
        let (checked, _, _) = try Self.check(inputs, Self.options())
        #expect(checked.count == expected.count)
        let firstDifference = zip(checked, expected).first { $0 != $1 }
        #expect(firstDifference == nil, "\(firstDifference.map { "\($0.0) vs \($0.1)" } ?? "")")
        let valid = expected.filter { if case .valid = $0 { return true } else { return false } }.count
        #expect(valid > 100 && valid < expected.count - 100)
    }
}
