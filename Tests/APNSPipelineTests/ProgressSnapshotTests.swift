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

    /// A quarter of the records done: 5,163 final (delivered to not sent) of the 20,652 estimated from a quarter
    /// of the bytes read.
    private let quarter = ReadProgress(bytesRead: 250, bytesTotal: 1000, records: 5163)

    /// 2026-11-28T05:01:02Z.
    private let time = 1_795_842_062.7

    @Test("a file input's log line: the time it was written first, percent done and ETA, each result kind apart")
    func fileLine() {
        let line = snapshot(read: quarter, window: 64).logLine(at: time)
        #expect(
            line == "2026-11-28T05:01:02Z apns-bulk: progress 25.0% of ~20652 ETA 1m30s | 5200 records: 5000 delivered,"
                + " 120 pruned, 7 rejected, 30 invalid, 2 retryable, 4 in doubt | 48 in flight (limit 64), 3 to retry"
                + " | 176 req/s | 30s elapsed")
    }

    @Test("the terminal display, wide: a bar with percent and ETA, then every count apart, in flight and its limit")
    func terminalLinesWide() {
        let lines = snapshot(read: quarter, window: 64).terminalLines(width: 200)
        #expect(
            lines == [
                "[#####...............] 25.0% of ~20,652  ETA 1m30s  176 req/s  30s elapsed",
                "5,200 records: 5,000 delivered, 120 pruned, 7 rejected, 30 invalid, 2 retryable, 4 in doubt"
                    + " | 48 in flight (limit 64), 3 to retry",
            ])
        #expect(snapshot(read: nil).terminalLines(width: 200).first == "5,200 records read  176 req/s  30s elapsed")
    }

    @Test(
        "the terminal display fits any width; percent, ETA and rate are the last to go",
        arguments: [20, 40, 59, 79, 119])
    func terminalLinesFit(width: Int) {
        let lines = snapshot(read: quarter, window: 64).terminalLines(width: width)
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
        let parts = [
            LinePart("first", keep: 0, separator: ""), LinePart("second", keep: 2, separator: ": "),
            LinePart("third", keep: 1, separator: ", "), LinePart("fourth", keep: 2, separator: " | "),
        ]
        #expect(LinePart.fit(parts, width: 100) == "first: second, third | fourth")
        #expect(LinePart.fit(parts, width: 28) == "first: second, third")
        #expect(LinePart.fit(parts, width: 19) == "first, third")
        #expect(LinePart.fit(parts, width: 5) == "first")
        #expect(LinePart.fit(parts, width: 3) == "fir")
    }

    @Test("counts of zero are left out of the live line, but delivered always shows")
    func zeroCounts() {
        let quiet = ProgressSnapshot(
            elapsedSeconds: 1, records: 3, delivered: 0, requests: 3, requestsPerSecond: 3,
            inFlight: 3, retriesPending: 0)
        #expect(quiet.terminalLines(width: 200)[1] == "3 records: 0 delivered | 3 in flight")
    }

    @Test("the JSON line is one object with the same facts; percent and ETA only when the size is known")
    func jsonLine() throws {
        let text = snapshot(read: quarter, window: 64).jsonLine(at: time)
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
        #expect(object["records_done"] as? Int == 5163)
        #expect(object["records_total"] as? Int == 20652)
        #expect(object["records_total_estimated"] as? Bool == true)
        #expect(object["requests_per_second"] as? Double == 176.4)

        let stdin = try #require(
            try JSONSerialization.jsonObject(with: Data(snapshot(read: nil).jsonLine(at: time).utf8)) as? [String: Any])
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

    @Test("expired records are done, shown apart on every line, and not counted as failed (replay does not send them)")
    func expiredRecords() {
        var summary = CampaignSummary()
        summary.records = 10
        summary.outcomes = [.delivered: 4, .expired: 6]
        summary.readProgress = ReadProgress(bytesRead: 10, bytesTotal: 10, records: 10, inputsEnded: true)
        let snapshot = ProgressSnapshot(summary, inFlight: 0)
        #expect(snapshot.expired == 6 && snapshot.failed == 0)
        #expect(snapshot.recordsDone == 10 && snapshot.fractionDone == 1)
        #expect(snapshot.logLine(at: time).contains("10 records: 4 delivered, 6 expired |"))
        #expect(snapshot.jsonLine(at: time).contains(#""expired":6"#))
        #expect(snapshot.terminalLines(width: 200).last?.contains("4 delivered, 6 expired") == true)
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
        summary.outcomes[.duplicate] = 1
        summary.recordsSkipped = 2
        summary.readProgress = ReadProgress(bytesRead: 10, bytesTotal: 10, records: 16, inputsEnded: true)
        let snapshot = ProgressSnapshot(summary, inFlight: 4, rateLimit: 2)
        #expect(snapshot.failed == 3)
        #expect(snapshot.invalid == 1)
        #expect(snapshot.rejected == 1)
        #expect(snapshot.retryable == 1)
        #expect(snapshot.inDoubt == 1)
        #expect(snapshot.notSent == 1)
        #expect(snapshot.retriesPending == 2)
        #expect(snapshot.requestsPerSecond == 3)
        #expect(snapshot.duplicates == 1 && snapshot.skipped == 2)
        // 12 final lines of this run (a duplicate among them) and 2 of the run resumed: 14 of the 16 records.
        #expect(snapshot.recordsDone == 14)
        #expect(snapshot.fractionDone == 14.0 / 16)
        #expect(snapshot.secondsLeft == 1, "2 left at --rate 2 (this run ended 4 a second)")
        #expect(
            snapshot.logLine(at: time).hasSuffix(
                "progress 87.5% of 16 ETA 1s | 11 records: 5 delivered, 1 pruned, 1 rejected,"
                    + " 1 invalid, 1 retryable, 1 in doubt, 1 not sent | 4 in flight, 2 to retry | 3 req/s | 3s elapsed"
            ))
    }

    /// 17 records, the whole file read ahead at once (as a small file is, whatever `--rate`), `done` of them with
    /// their final line after `elapsed` seconds.
    private func limited(done: Int, elapsed: Double, exact: Bool = true, rateLimit: Double? = 0.5) -> ProgressSnapshot {
        ProgressSnapshot(
            elapsedSeconds: elapsed, records: 17, delivered: done, requests: done, requestsPerSecond: 0,
            inFlight: 1, retriesPending: 0,
            read: ReadProgress(bytesRead: 1700, bytesTotal: 1700, records: 17, inputsEnded: exact),
            rateLimit: rateLimit)
    }

    @Test("percent and ETA follow the records done, not the bytes read: 6 of 17 at --rate 0.5 is 35.2 %, 22 s left")
    func percentFromRecordsDone() {
        let snapshot = limited(done: 6, elapsed: 11)
        #expect(snapshot.read?.fraction == 1, "the reader is at the end of the file")
        #expect(snapshot.total == .exact(17))
        #expect(
            snapshot.terminalLines(width: 200)[0] == "[#######.............] 35.2% of 17  ETA 22s  0 req/s  11s elapsed"
        )
        #expect(snapshot.secondsLeft == 22, "11 left at 0.5 a second")
    }

    @Test("never 100 % before every record is done; 100 % once they are", arguments: [0, 1, 16, 17])
    func hundredOnlyAtTheEnd(done: Int) {
        let snapshot = limited(done: done, elapsed: 30)
        let fraction = snapshot.fractionDone ?? -1
        #expect((fraction == 1) == (done == 17), "\(fraction) with \(done) of 17 done")
        #expect(snapshot.logLine(at: time).contains("100.0%") == (done == 17), "\(snapshot.logLine(at: time))")
        // An estimated total may be short: it never reads 100 %.
        let estimated = limited(done: done, elapsed: 30, exact: false)
        #expect(estimated.total == .estimated(17))
        #expect((estimated.fractionDone ?? 1) < 1)
        #expect(!estimated.logLine(at: time).contains("100.0%"), "\(estimated.logLine(at: time))")
    }

    @Test(
        "the ETA under --rate is what is left over the rate, not over a faster first burst; without it, the pace so far"
    )
    func etaUnderRate() {
        // 5 done in the first 0.2 s (the limiter's first burst): at --rate 5, the 15 left take 3 s.
        let burst = ProgressSnapshot(
            elapsedSeconds: 0.2, records: 20, delivered: 5, requests: 5, requestsPerSecond: 25,
            inFlight: 1, retriesPending: 0,
            read: ReadProgress(bytesRead: 100, bytesTotal: 100, records: 20, inputsEnded: true),
            rateLimit: 5)
        #expect(burst.secondsLeft == 3)
        var unlimited = burst
        unlimited.rateLimit = nil
        #expect(unlimited.secondsLeft == 0.6)
        // Slower than the rate (the server's latency): the pace so far.
        let slow = limited(done: 2, elapsed: 10, rateLimit: 5)
        #expect(slow.secondsLeft == 75, "15 left at 0.2 a second")
        #expect(limited(done: 0, elapsed: 10).secondsLeft == nil, "nothing done yet: no estimate")
    }

    @Test("the total before the reader reached the end: the records read scaled by the bytes that held them, marked ~")
    func estimatedTotal() {
        let early = ReadProgress(bytesRead: 2_000, bytesTotal: 200_000, records: 10)
        #expect(early.total == .estimated(1000))
        #expect(ReadProgress(bytesRead: 0, bytesTotal: 200_000, records: 0).total == nil)
        #expect(
            ReadProgress(bytesRead: 200_000, bytesTotal: 200_000, records: 998, inputsEnded: true).total == .exact(998))
        let snapshot = ProgressSnapshot(
            elapsedSeconds: 2, records: 10, delivered: 4, requests: 4, requestsPerSecond: 2,
            inFlight: 6, retriesPending: 0, read: early)
        #expect(
            snapshot.terminalLines(width: 200)[0].hasPrefix("[....................] 0.4% of ~1,000  ETA 8m18s"),
            "\(snapshot.terminalLines(width: 200)[0])")
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

    @Test(
        "a plain file: bytes up to the last record read over its size, from 0 to the whole file, with the records read")
    func plainFile() throws {
        let directory = try Support.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Support.write(ndjson(6000), to: "big.ndjson", in: directory)
        let size = Int64(try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        let reader = CampaignReader(
            inputs: [CampaignInput(path: path)], options: CampaignReaderOptions(defaults: Support.defaults))
        #expect(reader.readProgress == ReadProgress(bytesRead: 0, bytesTotal: size))
        _ = try reader.nextRecord()
        let early = try #require(reader.readProgress)
        // One record read: the bytes of its line, not the chunk the reader took from the file.
        let firstLine = Int64(ndjson(1).utf8.count)
        #expect(early == ReadProgress(bytesRead: firstLine, bytesTotal: size, records: 1), "\(early)")
        guard case .estimated(let estimate)? = early.total else {
            Issue.record("\(String(describing: early.total))")
            return
        }
        #expect(
            abs(estimate - 6000) < 300, "estimated \(estimate) from the first line (its number is shorter than most)")
        for _ in 0..<99 { _ = try reader.nextRecord() }
        #expect(
            reader.readProgress?.total
                == .estimated(Int((Double(100 * size) / Double(reader.readProgress?.bytesRead ?? 1)).rounded())))
        while try reader.nextRecord() != nil {}
        #expect(
            reader.readProgress == ReadProgress(bytesRead: size, bytesTotal: size, records: 6000, inputsEnded: true))
        #expect(reader.readProgress?.total == .exact(6000))
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
        #expect(
            reader.readProgress == ReadProgress(bytesRead: total, bytesTotal: total, records: 3005, inputsEnded: true))
    }

    @Test("standard input has no size: no progress fraction")
    func standardInput() {
        let reader = CampaignReader(
            inputs: [CampaignInput(path: "-")], options: CampaignReaderOptions(defaults: Support.defaults))
        #expect(reader.readProgress == nil)
    }
}
