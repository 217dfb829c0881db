import APNSCore
import Foundation
import Testing
@testable import APNSPipeline

@Suite("Progress: the log and JSON lines, percent done and time left")
struct ProgressSnapshotTests {
    private func snapshot(read: ReadProgress?, window: Int? = nil) -> ProgressSnapshot {
        ProgressSnapshot(
            elapsedSeconds: 30, records: 5200, delivered: 5000, pruned: 120, invalid: 30, failed: 4, requests: 5300,
            requestsPerSecond: 176.4, inFlight: 48, window: window, retriesPending: 3, read: read)
    }

    @Test("a file input: percent done and ETA from bytes read over the total size")
    func fileLine() {
        let line = snapshot(read: ReadProgress(bytesRead: 250, bytesTotal: 1000), window: 64).logLine
        #expect(line == "apns-bulk: progress 25.0% ETA 1m30s | 5200 records: 5000 delivered, 120 pruned, 30 invalid,"
            + " 4 failed | 48/64 in flight, 3 retries pending | 176 req/s | 30s elapsed")
    }

    @Test("the terminal display: a bar with percent and ETA, then the counts, in flight and retries pending")
    func terminalLines() {
        let lines = snapshot(read: ReadProgress(bytesRead: 250, bytesTotal: 1000), window: 64).terminalLines
        #expect(lines == [
            "[#####...............] 25.0%  ETA 1m30s  176 req/s  30s elapsed",
            "5,200 records: 5,000 delivered, 120 pruned, 30 invalid, 4 failed | 48/64 in flight, 3 retries pending",
        ])
        #expect(snapshot(read: nil).terminalLines.first == "5,200 records read  176 req/s  30s elapsed")
    }

    @Test("standard input: counts, rate and elapsed time, no percentage; in flight alone without a window")
    func stdinLine() {
        let line = snapshot(read: nil).logLine
        #expect(!line.contains("%"))
        #expect(!line.contains("ETA"))
        #expect(line.hasPrefix("apns-bulk: progress 5200 records: "))
        #expect(line.hasSuffix(" | 48 in flight, 3 retries pending | 176 req/s | 30s elapsed"))
    }

    @Test("the JSON line is one object with the same facts; percent and ETA only when the size is known")
    func jsonLine() throws {
        let text = snapshot(read: ReadProgress(bytesRead: 250, bytesTotal: 1000), window: 64).jsonLine
        #expect(!text.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["records"] as? Int == 5200)
        #expect(object["delivered"] as? Int == 5000)
        #expect(object["pruned"] as? Int == 120)
        #expect(object["invalid"] as? Int == 30)
        #expect(object["failed"] as? Int == 4)
        #expect(object["in_flight"] as? Int == 48)
        #expect(object["window"] as? Int == 64)
        #expect(object["retries_pending"] as? Int == 3)
        #expect(object["percent_done"] as? Double == 25)
        #expect(object["eta_seconds"] as? Double == 90)
        #expect(object["bytes_read"] as? Int == 250)
        #expect(object["bytes_total"] as? Int == 1000)
        #expect(object["requests_per_second"] as? Double == 176.4)

        let stdin = try #require(try JSONSerialization.jsonObject(with: Data(snapshot(read: nil).jsonLine.utf8)) as? [String: Any])
        #expect(stdin["percent_done"] == nil)
        #expect(stdin["eta_seconds"] == nil)
        #expect(stdin["window"] == nil)
        #expect(stdin["elapsed_seconds"] as? Double == 30)
    }

    @Test("the snapshot takes its facts from the dispatcher's summary")
    func fromSummary() {
        var summary = CampaignSummary()
        summary.records = 10
        summary.outcomes = [.delivered: 5, .prune: 1, .inputError: 1, .retryable: 1, .inDoubt: 1, .notSent: 1]
        summary.requests = 9
        summary.elapsedSeconds = 3
        summary.retriesPending = 2
        summary.readProgress = ReadProgress(bytesRead: 0, bytesTotal: 10)
        let snapshot = ProgressSnapshot(summary, inFlight: 4)
        #expect(snapshot.failed == 3)
        #expect(snapshot.retriesPending == 2)
        #expect(snapshot.requestsPerSecond == 3)
        #expect(snapshot.fractionDone == 0)
        #expect(snapshot.secondsLeft == nil, "nothing read yet: no estimate")
        #expect(snapshot.logLine.hasPrefix("apns-bulk: progress 0.0% ETA -- | 10 records: 5 delivered"))
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
