import APNSCore
import Foundation
import Testing
@testable import APNSPipeline

@Suite("Progress: the live lines, the log and JSON lines, percent done and time left")
struct ProgressSnapshotTests {
    private func snapshot(read: ReadProgress?, window: Int? = nil) -> ProgressSnapshot {
        ProgressSnapshot(
            elapsedSeconds: 30, records: 5200, delivered: 5000, pruned: 120, invalid: 30, rejected: 7, retryable: 2,
            inDoubt: 4, notSent: 0, requests: 5300, requestsPerSecond: 176.4, inFlight: 48, window: window,
            retriesPending: 3, read: read)
    }

    /// 2026-11-28T05:01:02Z.
    private let time = 1_795_842_062.7

    @Test("a file input's log line: the time it was written first, percent done and ETA, each result kind apart")
    func fileLine() {
        let line = snapshot(read: ReadProgress(bytesRead: 250, bytesTotal: 1000), window: 64).logLine(at: time)
        #expect(line == "2026-11-28T05:01:02Z apns-bulk: progress 25.0% ETA 1m30s | 5200 records: 5000 delivered,"
            + " 120 pruned, 7 rejected, 30 invalid, 2 retryable, 4 in doubt | 48 in flight (limit 64), 3 to retry"
            + " | 176 req/s | 30s elapsed")
    }

    @Test("the terminal display, wide: a bar with percent and ETA, then every count apart, in flight and its limit")
    func terminalLinesWide() {
        let lines = snapshot(read: ReadProgress(bytesRead: 250, bytesTotal: 1000), window: 64).terminalLines(width: 200)
        #expect(lines == [
            "[#####...............] 25.0%  ETA 1m30s  176 req/s  30s elapsed",
            "5,200 records: 5,000 delivered, 120 pruned, 7 rejected, 30 invalid, 2 retryable, 4 in doubt"
                + " | 48 in flight (limit 64), 3 to retry",
        ])
        #expect(snapshot(read: nil).terminalLines(width: 200).first == "5,200 records read  176 req/s  30s elapsed")
    }

    @Test("the terminal display fits any width; percent, ETA and rate are the last to go", arguments: [20, 40, 59, 79, 119])
    func terminalLinesFit(width: Int) {
        let lines = snapshot(read: ReadProgress(bytesRead: 250, bytesTotal: 1000), window: 64).terminalLines(width: width)
        for line in lines { #expect(line.count <= width, "\(line.count) columns: \(line)") }
        #expect(lines[0].contains("25.0%"))
        if width >= 59 {
            #expect(lines[0].contains("ETA 1m30s") && lines[0].contains("176 req/s"), "\(lines[0])")
            #expect(lines[1].hasPrefix("5,200 records: 5,000 delivered, "), "\(lines[1])")
            #expect(lines[1].contains("4 in doubt"), "in doubt outlasts the other counts: \(lines[1])")
        }
    }

    @Test("a part is left out whole, the least important first; a separator goes with its part")
    func partsLeftOut() {
        let parts = [LinePart("first", keep: 0, separator: ""), LinePart("second", keep: 2, separator: ": "),
                     LinePart("third", keep: 1, separator: ", "), LinePart("fourth", keep: 2, separator: " | ")]
        #expect(LinePart.fit(parts, width: 100) == "first: second, third | fourth")
        #expect(LinePart.fit(parts, width: 28) == "first: second, third")
        #expect(LinePart.fit(parts, width: 19) == "first, third")
        #expect(LinePart.fit(parts, width: 5) == "first")
        #expect(LinePart.fit(parts, width: 3) == "fir")
    }

    @Test("counts of zero are left out of the live line, but delivered always shows")
    func zeroCounts() {
        let quiet = ProgressSnapshot(elapsedSeconds: 1, records: 3, delivered: 0, requests: 3, requestsPerSecond: 3,
                                     inFlight: 3, retriesPending: 0)
        #expect(quiet.terminalLines(width: 200)[1] == "3 records: 0 delivered | 3 in flight")
    }

    @Test("the JSON line is one object with the same facts; percent and ETA only when the size is known")
    func jsonLine() throws {
        let text = snapshot(read: ReadProgress(bytesRead: 250, bytesTotal: 1000), window: 64).jsonLine(at: time)
        #expect(!text.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["time"] as? String == "2026-11-28T05:01:02Z")
        #expect(object["records"] as? Int == 5200)
        #expect(object["delivered"] as? Int == 5000)
        #expect(object["pruned"] as? Int == 120)
        #expect(object["invalid"] as? Int == 30)
        #expect(object["rejected"] as? Int == 7)
        #expect(object["retryable"] as? Int == 2)
        #expect(object["in_doubt"] as? Int == 4)
        #expect(object["not_sent"] as? Int == 0)
        #expect(object["failed"] as? Int == 6)
        #expect(object["in_flight"] as? Int == 48)
        #expect(object["window"] as? Int == 64)
        #expect(object["retries_pending"] as? Int == 3)
        #expect(object["percent_done"] as? Double == 25)
        #expect(object["eta_seconds"] as? Double == 90)
        #expect(object["bytes_read"] as? Int == 250)
        #expect(object["bytes_total"] as? Int == 1000)
        #expect(object["requests_per_second"] as? Double == 176.4)

        let stdin = try #require(try JSONSerialization.jsonObject(with: Data(snapshot(read: nil).jsonLine(at: time).utf8)) as? [String: Any])
        #expect(stdin["percent_done"] == nil)
        #expect(stdin["eta_seconds"] == nil)
        #expect(stdin["window"] == nil)
        #expect(stdin["elapsed_seconds"] as? Double == 30)
    }

    @Test("standard input: counts, rate and elapsed time, no percentage; in flight alone without a limit")
    func stdinLine() {
        let line = snapshot(read: nil).logLine(at: time)
        #expect(!line.contains("%"))
        #expect(!line.contains("ETA"))
        #expect(line.hasPrefix("2026-11-28T05:01:02Z apns-bulk: progress 5200 records: "))
        #expect(line.hasSuffix(" | 48 in flight, 3 to retry | 176 req/s | 30s elapsed"))
    }

    @Test("the snapshot takes its facts from the dispatcher's summary; rejected apart from invalid")
    func fromSummary() {
        var summary = CampaignSummary()
        summary.records = 11
        summary.outcomes = [.delivered: 5, .prune: 1, .inputError: 2, .retryable: 1, .inDoubt: 1, .notSent: 1]
        summary.rejected = 1
        summary.requests = 9
        summary.elapsedSeconds = 3
        summary.retriesPending = 2
        summary.readProgress = ReadProgress(bytesRead: 0, bytesTotal: 10)
        let snapshot = ProgressSnapshot(summary, inFlight: 4)
        #expect(snapshot.failed == 3)
        #expect(snapshot.invalid == 1)
        #expect(snapshot.rejected == 1)
        #expect(snapshot.retryable == 1)
        #expect(snapshot.inDoubt == 1)
        #expect(snapshot.notSent == 1)
        #expect(snapshot.retriesPending == 2)
        #expect(snapshot.requestsPerSecond == 3)
        #expect(snapshot.fractionDone == 0)
        #expect(snapshot.secondsLeft == nil, "nothing read yet: no estimate")
        #expect(snapshot.logLine(at: time).hasSuffix("progress 0.0% ETA -- | 11 records: 5 delivered, 1 pruned, 1 rejected,"
            + " 1 invalid, 1 retryable, 1 in doubt, 1 not sent | 4 in flight, 2 to retry | 3 req/s | 3s elapsed"))
    }

    @Test("durations read as a person says them")
    func durations() {
        #expect(ProgressSnapshot.duration(0) == "0s")
        #expect(ProgressSnapshot.duration(59.4) == "59s")
        #expect(ProgressSnapshot.duration(130) == "2m10s")
        #expect(ProgressSnapshot.duration(3720) == "1h02m")
    }
}

@Suite("Progress: how far the campaign reader has read its files")
struct ReadProgressTests {
    typealias Support = PipelineTestSupport

    private func ndjson(_ count: Int) -> String {
        (0..<count).map { #"{"token":"\#(Support.token($0))","payload":{"aps":{"alert":"n\#($0)"}}}"# }
            .joined(separator: "\n") + "\n"
    }

    @Test("a plain file: bytes consumed over its size, from 0 to the whole file")
    func plainFile() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Support.write(ndjson(6000), to: "big.ndjson", in: directory)
        let size = Int64(try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        let reader = CampaignReader(inputs: [CampaignInput(path: path)], options: CampaignReaderOptions(defaults: Support.defaults))
        #expect(reader.readProgress == ReadProgress(bytesRead: 0, bytesTotal: size))
        _ = try reader.nextRecord()
        let early = try #require(reader.readProgress)
        #expect(early.bytesRead > 0 && early.bytesRead < size, "one chunk read of a file larger than a chunk: \(early)")
        while try reader.nextRecord() != nil {}
        #expect(reader.readProgress == ReadProgress(bytesRead: size, bytesTotal: size))
    }

    @Test("a .gz file: compressed bytes consumed over the compressed size; several files add up")
    func gzipAndSeveralFiles() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = try Support.write(ndjson(3000), to: "a.ndjson", in: directory)
        let compressed = try Support.gzipFile(plain)
        let second = try Support.write(ndjson(5), to: "b.ndjson", in: directory)
        func size(_ path: String) throws -> Int64 {
            Int64(try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        }
        let compressedSize = try size(compressed)
        let total = try compressedSize + size(second)
        let reader = CampaignReader(
            inputs: [CampaignInput(path: compressed), CampaignInput(path: second)],
            options: CampaignReaderOptions(defaults: Support.defaults))
        _ = try reader.nextRecord()
        let early = try #require(reader.readProgress)
        #expect(early.bytesTotal == total)
        #expect(early.bytesRead > 0 && early.bytesRead <= compressedSize, "\(early)")
        var count = 1
        while try reader.nextRecord() != nil { count += 1 }
        #expect(count == 3005)
        #expect(reader.readProgress == ReadProgress(bytesRead: total, bytesTotal: total))
    }

    @Test("standard input has no size: no progress fraction")
    func standardInput() {
        let reader = CampaignReader(inputs: [CampaignInput(path: "-")], options: CampaignReaderOptions(defaults: Support.defaults))
        #expect(reader.readProgress == nil)
    }
}
