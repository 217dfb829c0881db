import APNSCore
import Foundation
import PipelineTestSupport
import Testing

@testable import APNSPipeline

@Suite("Replay and the dispatcher adapters")
struct ReplayAndAdapterTests {
    typealias Support = PipelineTestSupport

    private func notification(_ index: Int, payload: String = #"{"aps":{"alert":"x"}}"#) throws
        -> APNSCore.PushNotification
    {
        APNSCore.PushNotification(
            token: try DeviceToken(parsing: Support.token(index)), topic: Support.defaultTopic, pushType: .alert,
            payload: Array(payload.utf8)
        )
    }

    @Test("result lines alone rebuild the notifications of retryable, not-sent and in-doubt records, NDJSON and CSV")
    func replayFromResults() throws {
        let directory = try Support.temporaryDirectory()
        let path = directory.appendingPathComponent("run1.ndjson").path
        let writer = try ResultWriter(
            path: path, format: .ndjson, mode: .create, inputFiles: InputFileList(["campaign.ndjson"]))
        for (index, outcome) in RecordOutcome.allCases.enumerated() {
            try writer.write(
                ResultRecord(
                    key: RecordKey(fileIndex: 0, line: 100 + index), outcome: outcome, attempts: 1,
                    notification: try notification(index)))
        }
        try writer.write(
            ResultRecord(
                key: RecordKey(fileIndex: 0, line: 200), outcome: .retryable, token: "zz", topic: "com.example.app"))
        try writer.flush()
        let csvPath = directory.appendingPathComponent("run2.csv").path
        let csvWriter = try ResultWriter(
            path: csvPath, format: .csv, mode: .create, inputFiles: InputFileList(["c.csv"]))
        try csvWriter.write(
            ResultRecord(
                key: RecordKey(fileIndex: 0, line: 5), outcome: .inDoubt,
                notification: try notification(50, payload: "{\"a\":\"x,\\\"y\\\"\"}")))
        try csvWriter.flush()

        var rebuilt: [(line: Int, resultLine: Int, notification: APNSCore.PushNotification?, error: InputError?)] = []
        for file in [path, csvPath] {
            let reader = try ResultReader(path: file)
            while let result = try reader.next() {
                guard result.outcome.isReplayable else { continue }
                do {
                    rebuilt.append((result.key.line, reader.lineNumber, try result.replayNotification(), nil))
                } catch {
                    rebuilt.append((result.key.line, reader.lineNumber, nil, error))
                }
            }
        }
        let replayable = RecordOutcome.allCases.enumerated().filter { $0.element.isReplayable }.map(\.offset)
        #expect(rebuilt.map(\.line) == replayable.map { 100 + $0 } + [200, 5])
        #expect(rebuilt.map(\.resultLine) == replayable.map { $0 + 1 } + [RecordOutcome.allCases.count + 1, 2])
        for (entry, index) in zip(rebuilt, replayable) {
            #expect(entry.notification == (try notification(index)))
        }
        #expect(rebuilt[replayable.count].error?.code == .payloadMissing)
        #expect(rebuilt.last?.notification?.payload == Array("{\"a\":\"x,\\\"y\\\"\"}".utf8))
    }

    @Test("replay: each damaged result line becomes its own input error, named by file and line; the rest goes on")
    func damagedLinesInReplay() throws {
        let directory = try Support.temporaryDirectory()
        func line(_ number: Int, _ outcome: String, _ extra: String) -> String {
            #"{"file":"c.ndjson","line":\#(number),"token":"\#(Support.token(number))","topic":"com.example.app","outcome":"\#(outcome)","#
                + extra + #""payload":{"aps":{}}}"#
        }
        let lines = [
            line(1, "retryable", #""push_type":"alert","#),
            line(2, "retryable", #""push_type":"alarm","#),
            line(3, "in_doubt", #""priority":7,"#),
            line(4, "not_sent", #""expiration":"soon","#),
            line(5, "retryable", #""apns_id":"not-a-uuid","#),
            line(6, "delivered", #""priority":7,"#),
            #"{"file":"c.ndjson","line":7,"outcome":"retryable" this is not JSON"#,
            line(8, "retryable", #""collapse_id":"\ud800","#),
            line(9, "retryable", #""priority":true,"#),
            line(10, "in_doubt", #""apns_id":"123E4567-E89B-12D3-A456-426614174000","#),
        ]
        let path = try Support.write(lines.joined(separator: "\n") + "\n", to: "damaged.ndjson", in: directory)
        let reader = try ReplayReader(resultPaths: [path], includeInDoubt: true)
        var records: [CampaignRecord] = []
        while let record = try reader.nextRecord() { records.append(record) }

        #expect(reader.inputPaths == ["c.ndjson", path])
        let keys = records.map { "\(reader.inputPaths[$0.key.fileIndex]):\($0.key.line)" }
        #expect(
            keys == [1, 2, 3, 4, 5].map { "c.ndjson:\($0)" } + ["\(path):7"] + [8, 9, 10].map { "c.ndjson:\($0)" })
        var codes: [InputError.Code?] = []
        for record in records {
            switch record.content {
            case .notification: codes.append(nil)
            case .invalid(let error, let tokenText, _):
                codes.append(error.code)
                #expect(error.detail.contains(path + ":"), "\(error.detail)")
                if record.key.fileIndex == 0 { #expect(tokenText == Support.token(record.key.line)) }
            }
        }
        #expect(
            codes == [
                nil, .pushTypeUnknown, .priorityInvalid, .expirationInvalid, .apnsIDInvalid, .recordInvalidJSON,
                .collapseIDInvalid, .recordFieldInvalid, nil,
            ])
        if case .notification(let replayed) = records.last?.content {
            #expect(replayed.apnsID?.description == "123e4567-e89b-12d3-a456-426614174000")
        }
        #expect(reader.selected == 9)
    }

    @Test("prune and resume still refuse a result file with a damaged line in the middle")
    func damagedLineStillThrowsForReaders() throws {
        let bytes = Array(#"{"file":"c","line":1,"outcome":"retryable","push_type":"alarm"}"#.utf8) + [0x0A]
        let reader = try ResultReader(source: MemoryByteSource(bytes), name: "r")
        #expect(throws: PipelineError.self) { try reader.next() }
    }

    @Test("the campaign reader is a record reader; the sink writes results and journal, results first")
    func adapters() throws {
        let directory = try Support.temporaryDirectory()
        let input = try Support.write(
            #"{"token":"\#(Support.token(1))","payload":{"a":1}}"# + "\n" + #"{"token":"abc"}"# + "\n", to: "in.ndjson",
            in: directory)
        let reader: any RecordReader = CampaignReader(
            inputs: [CampaignInput(path: input)], options: CampaignReaderOptions(defaults: Support.defaults))
        let first = try #require(try reader.nextRecord())
        let second = try #require(try reader.nextRecord())
        #expect(try reader.nextRecord() == nil)
        #expect(first.key == RecordKey(fileIndex: 0, line: 1))
        guard case .notification(let sent) = first.content else {
            Issue.record("first record should be valid")
            return
        }
        guard case .invalid(let error, let tokenText, _) = second.content else {
            Issue.record("second record should be invalid")
            return
        }
        #expect(error.code == .tokenOddLength && tokenText == "abc")

        let results = MemoryByteSink()
        let journal = MemoryByteSink()
        let sink = ResultFileSink(
            writer: ResultWriter(sink: results, format: .ndjson, inputFiles: InputFileList([input])),
            journal: SendJournal(sink: journal))
        try sink.journalSent(first.key)
        try sink.write(
            ResultRecord(
                key: first.key, outcome: .retryable, status: 503, reason: "ServiceUnavailable", attempts: 3,
                notification: sent))
        try sink.journalRetryable(first.key)
        #expect(results.bytes.isEmpty && journal.bytes.isEmpty)
        try sink.flush()
        #expect(journal.text == "s 0 1\nr 0 1\n")
        let resultReader = try ResultReader(source: MemoryByteSource(results.bytes), name: "r")
        let line = try #require(try resultReader.next())
        #expect(resultReader.inputFiles.path(at: line.key.fileIndex) == input && line.key.line == 1)
        #expect(line.outcome == .retryable && line.attempts == 3 && line.token == sent.token.hex)
        #expect(try line.replayNotification() == sent)
    }

    @Test("a payload that is not a JSON object is kept as a string, invalid UTF-8 replaced")
    func invalidUTF8Payload() throws {
        let sink = MemoryByteSink()
        let writer = ResultWriter(sink: sink, format: .ndjson, inputFiles: InputFileList(["f"]))
        var record = ResultRecord(key: RecordKey(fileIndex: 0, line: 1), outcome: .notSent)
        record.payload = [0x61, 0xFF, 0x22, 0x0A]
        try writer.write(record)
        try writer.flush()
        #expect(sink.text.contains(#""payload":"a\#u{FFFD}\"\n"}"#))
        let reader = try ResultReader(source: MemoryByteSource(sink.bytes), name: "r")
        #expect(try reader.next()?.payload == Array("a\u{FFFD}\"\n".utf8))
    }
}
