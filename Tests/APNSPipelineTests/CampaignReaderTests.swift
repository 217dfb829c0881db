import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

@Suite("Campaign reader: files, gzip, several inputs")
struct CampaignReaderTests {
    typealias Support = PipelineTestSupport

    private func ndjson(_ count: Int, from start: Int = 0) -> String {
        (start..<(start + count)).map { #"{"token":"\#(Support.token($0))","payload":{"aps":{"alert":"n\#($0)"}}}"# }
            .joined(separator: "\n") + "\n"
    }

    @Test("several inputs keep their index; blank lines are skipped but counted; BOM and CRLF are fine")
    func severalInputs() throws {
        let directory = try Support.temporaryDirectory()
        let first = try Support.write(
            "\u{FEFF}" + ndjson(2).replacingOccurrences(of: "\n", with: "\r\n") + "\r\n   \n" + ndjson(1, from: 2),
            to: "a.ndjson", in: directory)
        let second = try Support.write(ndjson(2, from: 10), to: "b.jsonl", in: directory)
        let records = try Support.readAll([CampaignInput(path: first), CampaignInput(path: second)])
        #expect(records.map(\.key.fileIndex) == [0, 0, 0, 1, 1])
        #expect(records.map(\.key.line) == [1, 2, 5, 1, 2])
        #expect(records.allSatisfy { $0.notification != nil })
        #expect(records[2].notification?.token.hex == Support.token(2))
    }

    @Test("a line too long is one RecordTooLong record with its number; the run goes on")
    func lineTooLong() throws {
        let directory = try Support.temporaryDirectory()
        let long = #"{"token":"\#(Support.token(1))","payload":{"a":"\#(String(repeating: "x", count: 200))"}}"#
        let path = try Support.write(ndjson(1) + long + "\n" + ndjson(1, from: 5), to: "l.ndjson", in: directory)
        var options = CampaignReaderOptions(defaults: Support.defaults)
        options.maximumRecordLength = 150
        let records = try Support.readAll([CampaignInput(path: path)], options: options)
        #expect(records.map(\.key.line) == [1, 2, 3])
        #expect(records.map(\.code) == [nil, .recordTooLong, nil])
        #expect(
            records[1].error?.detail.contains("--max-record-bytes") == true,
            "the reason names the option that raises the limit")
    }

    @Test("gzip input is detected by name and by magic bytes, from a file and from a pipe")
    func gzipInput() throws {
        let directory = try Support.temporaryDirectory()
        let plain = try Support.write(ndjson(300), to: "g.ndjson", in: directory)
        let compressed = try Support.gzipFile(plain)
        let renamed = directory.appendingPathComponent("g-no-extension").path
        try FileManager.default.copyItem(atPath: compressed, toPath: renamed)
        let expected = try Support.readAll([CampaignInput(path: plain)]).compactMap { $0.notification }
        #expect(expected.count == 300)
        for path in [compressed, renamed] {
            let source = try FileByteSource(path: path)
            #expect(source.isCompressed)
            let records = try Support.readAll([CampaignInput(path: path, format: .ndjson)])
            #expect(records.compactMap { $0.notification } == expected)
        }
        // Through a FIFO: not seekable, so detection reads the magic bytes and replays them into gzip.
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let feeder = Process()
        feeder.executableURL = URL(fileURLWithPath: "/bin/sh")
        feeder.arguments = ["-c", "cat \"$0\" > \"$1\"", renamed, fifo]
        try feeder.run()
        let records = try Support.readAll([CampaignInput(path: fifo, format: .ndjson)])
        feeder.waitUntilExit()
        #expect(records.compactMap { $0.notification } == expected)
    }

    @Test("plain text through a FIFO keeps the bytes read for detection")
    func fifoPlain() throws {
        let directory = try Support.temporaryDirectory()
        let plain = try Support.write(ndjson(3), to: "p.ndjson", in: directory)
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let feeder = Process()
        feeder.executableURL = URL(fileURLWithPath: "/bin/sh")
        feeder.arguments = ["-c", "cat \"$0\" > \"$1\"", plain, fifo]
        try feeder.run()
        let records = try Support.readAll([CampaignInput(path: fifo)])
        feeder.waitUntilExit()
        #expect(records.compactMap { $0.notification?.token.hex } == (0..<3).map { Support.token($0) })
    }

    @Test("a corrupt or truncated gzip stream is an error, not a short file")
    func corruptGzip() throws {
        let directory = try Support.temporaryDirectory()
        let plain = try Support.write(ndjson(2000), to: "c.ndjson", in: directory)
        let compressed = try Array(Data(contentsOf: URL(fileURLWithPath: Support.gzipFile(plain))))
        let truncated = try Support.write(
            Array(compressed.prefix(compressed.count / 2)), to: "t.ndjson.gz", in: directory)
        #expect {
            _ = try Support.readAll([CampaignInput(path: truncated)])
        } throws: { error in
            (error as? PipelineError)?.kind == .gzipFailed
        }
    }

    @Test("a missing file is an openFailed error naming the path")
    func missingFile() {
        #expect {
            _ = try Support.readAll([CampaignInput(path: "/nonexistent/x.ndjson")])
        } throws: { error in
            (error as? PipelineError)?.kind == .openFailed && "\(error)".contains("/nonexistent/x.ndjson")
        }
    }

    @Test("the format follows the name unless given")
    func formatByName() {
        #expect(CampaignInput(path: "a.csv").format == .csv)
        #expect(CampaignInput(path: "a.CSV.gz").format == .csv)
        #expect(CampaignInput(path: "a.ndjson.gz").format == .ndjson)
        #expect(CampaignInput(path: "-").format == .ndjson)
        #expect(CampaignInput(path: "-", format: .csv).format == .csv)
    }

    @Test("the fixture campaign reads as documented in its README")
    func fixtureCampaign() throws {
        let path = Support.fixtures.appendingPathComponent("campaign.ndjson").path
        let records = try Support.readAll([CampaignInput(path: path)])
        #expect(records.map(\.key.line) == [1, 2, 3, 4, 5, 7])
        #expect(records.map(\.code) == [nil, nil, .tokenOddLength, .recordInvalidJSON, .pushTypeUnknown, nil])
        #expect(records[1].notification?.pushType == .background)
        #expect(records[1].notification?.priority == .powerAware)
    }

    @Test("not keeping payloads checks every payload the same: same records, same verdicts, empty payloads only")
    func sameVerdicts() throws {
        let directory = try Support.temporaryDirectory()
        let token = Support.token(3)
        let ndjson =
            [
                #"{"token":"\#(token)","payload":{"aps":{"alert":"hi"}}}"#,
                #"{"token":"\#(token)","payload":{"aps":{"alert":"hi"},"x":"\#(String(repeating: "y", count: 4100))"}}"#,
                #"{"token":"\#(token)","payload":{"aps":{"content-available":1}},"push_type":"background","priority":10}"#,
                #"{"token":"\#(token)","vars":{"name":"Ann"}}"#,
                #"{"token":"\#(token)","vars":{"name":"\#(String(repeating: "z", count: 4100))"}}"#,
                #"{"token":"\#(token)","payload":[1]}"#,
            ].joined(separator: "\n") + "\n"
        let csv = "token,payload,name\n\(token),\"{\"\"aps\"\":{}}\",x\n\(token),\"{\"\"aps\"\":1\",x\n\(token),,Bob\n"
        let inputs = [
            CampaignInput(path: try Support.write(ndjson, to: "p.ndjson", in: directory)),
            CampaignInput(path: try Support.write(csv, to: "p.csv", in: directory)),
        ]
        var options = CampaignReaderOptions(defaults: Support.defaults)
        options.template = try PayloadTemplate(bytes: Array(#"{"aps":{"alert":"{{name}}"}}"#.utf8))
        let kept = try Support.readAll(inputs, options: options)
        options.keepsPayloads = false
        let checked = try Support.readAll(inputs, options: options)

        #expect(
            kept.map(\.code) == [
                nil, .payloadTooLarge, .priorityForbiddenForBackground, nil, .payloadTooLarge,
                .payloadNotObject, nil, .payloadInvalidJSON, nil,
            ])
        #expect(checked.map(\.code) == kept.map(\.code))
        #expect(checked.map(\.key) == kept.map(\.key))
        #expect(checked.map { $0.notification?.token } == kept.map { $0.notification?.token })
        let keptPayloads = kept.compactMap { $0.notification?.payload }
        let checkedPayloads = checked.compactMap { $0.notification?.payload }
        #expect(keptPayloads.allSatisfy { !$0.isEmpty })
        #expect(checkedPayloads.allSatisfy { $0.isEmpty })
        #expect(checked.compactMap(\.notification).count == 4)
    }

    @Test("records that repeat the payload before them share its bytes; any other payload is its own, byte for byte")
    func repeatedPayloadsShareStorage() throws {
        let directory = try Support.temporaryDirectory()
        let a = #"{"aps":{"alert":"same"}}"#
        let b = #"{"aps":{"alert":"samf"}}"#  // as long as `a`, one byte different
        let c = #"{"aps":{"badge":1}}"#
        let payloads = [a, a, b, a, a, c, c]
        let ndjson =
            payloads.enumerated()
            .map { #"{"token":"\#(Support.token($0.offset))","payload":\#($0.element)}"# }.joined(separator: "\n")
            + "\n"
        let csv =
            "token,payload\n"
            + payloads.enumerated().map {
                "\(Support.token($0.offset)),\"\($0.element.replacingOccurrences(of: "\"", with: "\"\""))\""
            }.joined(separator: "\n") + "\n"
        // A template filled with the same values renders the same bytes.
        let names = ["Ann", "Ann", "Bob", "Bob", "Ann"]
        let templated =
            names.enumerated()
            .map { #"{"token":"\#(Support.token($0.offset))","vars":{"name":"\#($0.element)"}}"# }.joined(
                separator: "\n") + "\n"
        var options = CampaignReaderOptions(defaults: Support.defaults)
        let plain = try Support.readAll([
            CampaignInput(path: try Support.write(ndjson, to: "r.ndjson", in: directory)),
            CampaignInput(path: try Support.write(csv, to: "r.csv", in: directory)),
        ])
        options.template = try PayloadTemplate(bytes: Array(#"{"aps":{"alert":"{{name}}"}}"#.utf8))
        let filled = try Support.readAll(
            [CampaignInput(path: try Support.write(templated, to: "t.ndjson", in: directory))], options: options
        )

        func storage(_ payload: [UInt8]) -> UInt? {
            payload.withUnsafeBufferPointer { $0.baseAddress.map { UInt(bitPattern: $0) } }
        }
        for (records, expected) in [
            (Array(plain[..<7]), payloads), (Array(plain[7...]), payloads),
            (filled, names.map { #"{"aps":{"alert":"\#($0)"}}"# }),
        ] {
            let kept = records.compactMap { $0.notification?.payload }
            #expect(kept.map { String(decoding: $0, as: UTF8.self) } == expected)
            for index in 1..<kept.count {
                let shared = storage(kept[index]) == storage(kept[index - 1])
                #expect(shared == (expected[index] == expected[index - 1]), "record \(index + 1)")
            }
        }
    }
}
