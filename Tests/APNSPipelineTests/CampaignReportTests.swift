import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

@Suite("Campaign report: figures from result lines of one run or many shards, and its HTML")
struct CampaignReportTests {
    private func line(
        _ outcome: RecordOutcome, _ reason: String? = nil, token: String = "aa", attempts: Int = 1,
        timestamp: Int64? = nil
    ) -> ResultRecord {
        ResultRecord(
            key: RecordKey(fileIndex: 0, line: 1), outcome: outcome, token: token, topic: "com.example.app",
            reason: reason, timestamp: timestamp, attempts: attempts)
    }

    /// Two shards: shard 0 has a retryable and an in-doubt record, shard 1 only finished ones.
    private func twoShards() -> CampaignReport {
        var report = CampaignReport()
        let shard0 = "out/results-0.ndjson"
        let shard1 = "out/results 1.ndjson"
        report.add(line(.delivered), resultFile: shard0)
        report.add(line(.delivered, attempts: 2), resultFile: shard0)
        report.add(line(.retryable, "TooManyRequests", attempts: 5), resultFile: shard0)
        report.add(line(.inDoubt, attempts: 1), resultFile: shard0)
        report.add(line(.prune, "Unregistered", token: "dead", timestamp: 5), resultFile: shard1)
        report.add(line(.prune, "Unregistered", token: "dead", timestamp: 9), resultFile: shard1)
        report.add(line(.prune, "BadDeviceToken", token: "0bad"), resultFile: shard1)
        report.add(line(.inputError, "TokenOddLength", attempts: 0), resultFile: shard1)
        report.add(line(.duplicate, attempts: 0), resultFile: shard1)
        report.add(line(.delivered), resultFile: shard1)
        return report
    }

    @Test("records, outcomes, reasons, tokens to prune, duplicates and attempts add up over shards")
    func figures() {
        let report = twoShards()
        #expect(report.records == 10)
        #expect(report.count(.delivered) == 3)
        #expect(report.count(.prune) == 3)
        #expect(report.tokensToPrune == 2, "the same dead token in two lines is one token to delete")
        #expect(report.count(.duplicate) == 1)
        #expect(report.replayableTotal == 2)
        #expect(report.attempts == 13)
        #expect(report.recordsByAttempts == [0: 2, 1: 6, 2: 1, 5: 1])
        #expect(report.reasons.first == CampaignReport.ReasonCount(outcome: .prune, reason: "Unregistered", count: 2))
        #expect(report.reasons.count == 4)
    }

    @Test("the replay command names only the shards with records to send again, quoted for the shell")
    func replayCommand() {
        var report = twoShards()
        #expect(report.replayCommand() == "apns-bulk replay out/results-0.ndjson --results replay.ndjson")
        #expect(
            report.replayCommandExcludingInDoubt()
                == "apns-bulk replay out/results-0.ndjson --exclude-in-doubt --results replay.ndjson")
        report.add(line(.notSent, attempts: 0), resultFile: "out/results 1.ndjson")
        #expect(
            report.replayCommand()
                == "apns-bulk replay out/results-0.ndjson 'out/results 1.ndjson' --results replay.ndjson")
        #expect(
            report.pruneCommand()
                == "apns-bulk prune out/results-0.ndjson 'out/results 1.ndjson' --format csv --output prune.csv")
        var clean = CampaignReport()
        clean.add(line(.delivered), resultFile: "r.ndjson")
        #expect(clean.replayCommand() == nil)
        #expect(clean.pruneCommand() == nil)
        #expect(ShellWord.quoted("it's") == #"'it'\''s'"#)
    }

    @Test("shards run side by side: their rates add up in the buckets they share")
    func mergedSeries() throws {
        func timeline(startedAt: Double, perSecond: Int, seconds: Int) -> CampaignTimeline {
            CampaignTimeline(
                startedAt: startedAt,
                samples: (1...seconds).map { second in
                    CampaignTimeline.Sample(
                        elapsedSeconds: Double(second), records: second * perSecond, answered: second * perSecond,
                        delivered: second * perSecond, requests: second * perSecond, latencyP50: 0.01,
                        latencyP99: second == 2 ? 0.5 : 0.05, inFlight: 10, window: 16)
                })
        }
        var report = CampaignReport()
        report.add(timeline(startedAt: 100, perSecond: 1000, seconds: 4))
        report.add(timeline(startedAt: 102, perSecond: 500, seconds: 4))
        let series = try #require(report.series())
        #expect(series.bucketSeconds == 1)
        #expect(series.points.count == 6)
        #expect(series.points.map(\.answersPerSecond) == [1000, 1000, 1500, 1500, 500, 500])
        #expect(series.points.map(\.inFlight) == [10, 10, 20, 20, 10, 10])
        #expect(series.points.map(\.window) == [16, 16, 32, 32, 16, 16])
        #expect(series.points[1].latencyP99 == 0.5)
        #expect(series.points[3].latencyP99 == 0.5, "the larger p99 of the two shards in that second")
        #expect(series.points[0].latencyP99 == 0.05)
        #expect(CampaignReport().series() == nil)

        var short = CampaignReport()
        short.add(
            CampaignTimeline(
                startedAt: 0,
                samples: [
                    .init(
                        elapsedSeconds: 1, records: 1000, answered: 1000, delivered: 1000, requests: 1000, inFlight: 5),
                    .init(
                        elapsedSeconds: 2.5, records: 2500, answered: 2500, delivered: 2500, requests: 2500, inFlight: 0
                    ),
                ]))
        let cut = try #require(short.series())
        #expect(
            cut.points.map(\.answersPerSecond) == [1000, 1000, 1000],
            "the last half second is a rate over half a second")
        #expect(cut.points.last?.seconds == 2.5)
    }

    @Test("shards run one after another: each its own labelled line, absent outside its run; the total beside them")
    func shardsOneAfterAnother() throws {
        func timeline(_ label: String, startedAt: Double, perSecond: Int, seconds: Int) -> CampaignTimeline {
            var timeline = CampaignTimeline(
                startedAt: startedAt,
                samples: (1...seconds).map { second in
                    CampaignTimeline.Sample(
                        elapsedSeconds: Double(second), records: second * perSecond, answered: second * perSecond,
                        delivered: second * perSecond, requests: second * perSecond, inFlight: 10)
                })
            timeline.label = label
            return timeline
        }
        var report = CampaignReport()
        report.add(timeline("shard 0/2", startedAt: 100, perSecond: 1000, seconds: 3))
        report.add(timeline("shard 1/2", startedAt: 105, perSecond: 500, seconds: 3))
        let series = try #require(report.series())
        #expect(series.points.map(\.answersPerSecond) == [1000, 1000, 1000, 0, 0, 500, 500, 500])
        #expect(series.runs.map(\.label) == ["shard 0/2", "shard 1/2"])
        #expect(series.runs[0].answersPerSecond == [1000, 1000, 1000, nil, nil, nil, nil, nil])
        #expect(series.runs[1].answersPerSecond == [nil, nil, nil, nil, nil, 500, 500, 500])

        let page = CampaignReportHTML(report: report).render()
        #expect(
            page.contains("shard 0/2 results/s") && page.contains("shard 1/2 results/s")
                && page.contains("all runs results/s"))
        #expect(page.contains("Throughput of each run and of all together"))
    }

    @Test("each result file's run: inputs, topics, start, finish and duration from its campaign record and lines")
    func runFacts() throws {
        var report = twoShards()
        let identity = CampaignIdentity(
            command: "send", inputs: [.init(path: "in/c <1>.ndjson", fingerprint: "x")],
            settings: ["--topic": "com.example.app"])
        var manifest = CampaignManifest(identity: identity, arguments: ["send"], startedAt: 1_795_842_000)
        manifest.state = .finished
        manifest.finishedAt = 1_795_842_000 + 754
        report.runs["out/results-0.ndjson", default: CampaignReport.RunFacts()].take(manifest)
        let facts = try #require(report.runs["out/results-0.ndjson"])
        #expect(facts.inputs == ["in/c <1>.ndjson"])
        #expect(facts.topics == ["com.example.app": 4])
        #expect(facts.durationSeconds == 754)
        #expect(report.runs["out/results 1.ndjson"]?.state == nil, "no campaign record: no state")

        let page = CampaignReportHTML(report: report, timeZone: TimeZone(identifier: "UTC")!).render()
        #expect(
            page.contains(
                "<td><code>out/results-0.ndjson</code></td><td><code>in/c &lt;1&gt;.ndjson</code></td>"
                    + "<td><code>com.example.app</code> 4</td><td class=\"t\">2026-11-28T05:00:00Z</td><td class=\"t\">2026-11-28T05:12:34Z</td>"
                    + "<td class=\"n\">12m34s</td><td>finished</td><td class=\"n\">2</td></tr>"), "\(page)")
        #expect(
            page.contains("Sent from 2026-11-28 05:00 UTC; still going, or stopped before the end"),
            "one file has no finish time")

        var many = CampaignReport.RunFacts()
        for number in 0..<20 { many.count(topic: "com.example.app\(number)") }
        #expect(many.topics.count == CampaignReport.RunFacts.maximumTopics)
        #expect(many.otherTopicRecords == 20 - CampaignReport.RunFacts.maximumTopics)
    }

    @Test("the HTML is one self-contained page with the figures, the replay command and print CSS")
    func html() {
        var report = twoShards()
        report.add(
            CampaignTimeline(
                startedAt: 0,
                samples: [
                    .init(
                        elapsedSeconds: 1, records: 5, answered: 5, delivered: 5, requests: 5, latencyP50: 0.002,
                        latencyP99: 0.009, inFlight: 2),
                    .init(
                        elapsedSeconds: 2, records: 10, answered: 10, delivered: 8, requests: 11, latencyP50: 0.003,
                        latencyP99: 0.012, inFlight: 0),
                ]))
        let page = CampaignReportHTML(report: report, title: "Spring <sale>").render()
        #expect(page.hasPrefix("<!DOCTYPE html>"))
        #expect(page.contains("<title>Spring &lt;sale&gt;</title>"))
        // The safe replay (no in-doubt records) first; the one that may send twice second, and saying so.
        #expect(
            page.contains(
                "<pre id=\"replay-command\">apns-bulk replay out/results-0.ndjson --exclude-in-doubt --results replay.ndjson</pre>"
            ))
        #expect(
            page.contains(
                "may deliver some twice:</p><pre id=\"replay-command-with-in-doubt\">apns-bulk replay out/results-0.ndjson --results replay.ndjson</pre>"
            ))
        let safe = page.range(of: "id=\"replay-command\"")?.lowerBound
        let risky = page.range(of: "id=\"replay-command-with-in-doubt\"")?.lowerBound
        #expect(safe != nil && risky != nil && safe! < risky!)
        #expect(page.contains("apns-bulk prune out/results-0.ndjson &#39;out/results 1.ndjson&#39;"))
        #expect(page.contains("<div class=\"label\">Tokens to prune</div><div class=\"value\">2</div>"))
        #expect(page.contains("<div class=\"label\">Records</div><div class=\"value\">10</div>"))
        #expect(page.contains("TooManyRequests"))
        #expect(page.contains("@media print"))
        #expect(page.components(separatedBy: "<svg").count - 1 == 4, "the outcome bar and three charts")
        for forbidden in ["<script", "http:", "https:", "url(", "<img", "<link", "@import", "@font-face"] {
            #expect(!page.contains(forbidden), "nothing fetched, no script: \(forbidden)")
        }
        let withoutTimeline = CampaignReportHTML(report: twoShards()).render()
        #expect(withoutTimeline.contains("No timeline"))
        #expect(withoutTimeline.components(separatedBy: "<svg").count - 1 == 1)
    }

    @Test("expired records: their own card and colour, counted as records, not as replayable")
    func expired() {
        var report = twoShards()
        report.add(line(.expired, attempts: 0), resultFile: "out/results-0.ndjson")
        report.add(line(.expired, attempts: 0), resultFile: "out/results-0.ndjson")
        #expect(report.records == 12 && report.count(.expired) == 2)
        #expect(report.replayableTotal == 2, "expired records counted as replayable")
        let page = CampaignReportHTML(report: report).render()
        #expect(
            page.contains(
                "<div class=\"card\" id=\"figure-expired\"><div class=\"label\">Expired</div><div class=\"value\">2</div>"
            ))
        #expect(
            page.contains("fill=\"#393b79\"><title>Not sent: past the campaign's deadline: 2</title>"),
            "the outcome bar draws expired in its own colour")
        let colours = RecordOutcome.allCases.map(CampaignReportHTML.color)
        #expect(Set(colours).count == colours.count, "two outcomes share a colour")
    }

    @Test("text from outside (reasons, paths, titles) reaches the page with no raw control character, HTML-escaped")
    func hostileTextInHTML() {
        let hostile = "<script>alert(1)</script>\u{1B}]0;pwned\u{07}\nFAKE LINE\u{202E}\u{85}"
        var report = CampaignReport()
        report.add(line(.retryable, hostile), resultFile: "out/\(hostile).ndjson")
        let page = CampaignReportHTML(report: report, title: hostile).render()
        let raw = page.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" || $0 == "\u{2028}"
        }
        #expect(raw.isEmpty, "raw control characters on the page: \(raw.map { String($0.value, radix: 16) })")
        #expect(!page.contains("<script>"))
        #expect(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;\\u{1B}]0;pwned\\u{07}\\nFAKE LINE"),
            "escaped as on a terminal")
    }

    @Test(
        "the people's part: a plain headline over devices, what accepted means, plain labels, a sample, then the technical detail"
    )
    func peoplesPart() throws {
        var report = twoShards()
        report.add(
            ResultRecord(
                key: RecordKey(fileIndex: 0, line: 4), token: "cc", topic: "com.example.app", outcome: .retryable,
                reason: "TooManyRequests", attempts: 1,
                payload: Array(#"{"aps":{"alert":{"title":"Spring <sale>","body":"20% off"}}}"#.utf8)),
            resultFile: "out/results-0.ndjson")
        let page = CampaignReportHTML(report: report).render()
        #expect(
            page.contains("<strong>3 of 10</strong> people&#39;s devices: accepted by Apple for delivery")
                || page.contains("<strong>3 of 10</strong> people's devices: accepted by Apple for delivery"),
            "11 entries, 1 duplicate")
        #expect(
            page.contains("id=\"accepted-means\"") && page.contains("does not") && page.contains("displayed or opened"))
        for label in [
            "Accepted by Apple", "Devices no longer reachable (app removed, or the phone no longer registered)",
            "Not accepted yet, can be sent again", "Answer lost: may have arrived",
            "Not sendable: problem in the campaign data", "Duplicate entries skipped",
        ] {
            #expect(page.contains(label), "\(label)")
        }
        #expect(
            page.contains(
                "<div class=\"sample-title\">Spring &lt;sale&gt;</div><div class=\"sample-body\">20% off</div>"))
        let people = try #require(page.range(of: "id=\"what-happened\""))
        let technical = try #require(page.range(of: "Technical detail (for the operators)"))
        let reasons = try #require(page.range(of: "TooManyRequests"))
        #expect(
            people.lowerBound < technical.lowerBound && technical.lowerBound < reasons.lowerBound,
            "the tool's words only below the technical heading")
        // The part above the technical heading speaks no tool words: no file kinds, outcome names, reasons or commands.
        let summary = try #require(page.range(of: "<section id=\"summary\""))
        let peoplesText = String(page[summary.lowerBound..<technical.lowerBound])
            .replacingOccurrences(of: "<style>[^<]*</style>", with: "", options: .regularExpression)
            .replacingOccurrences(of: "<[^>]+>", with: " ", options: .regularExpression)
        for word in [
            "result file", "summar", "prune", "retryable", "in_doubt", "input_error", "not_sent", "TooManyRequests",
            "replay", "apns-bulk ", "APNs", "request", "record", "token", "--",
        ] {
            #expect(!peoplesText.contains(word), "the people's part says \"\(word)\"")
        }
        #expect(
            CampaignReportHTML.plainDuration(12) == "under a minute"
                && CampaignReportHTML.plainDuration(1_530) == "about 26 minutes")
        #expect(
            CampaignReportHTML.plainDuration(7_800) == "about 2 hours 10 minutes"
                && CampaignReportHTML.plainDuration(3_600) == "about 1 hour")
        #expect(!CampaignReportHTML(report: CampaignReport()).render().contains("class=\"sample-title\""))
        #expect(CampaignReportHTML(report: CampaignReport()).render().contains("id=\"no-sample\""))
    }

    @Test("times in the machine's zone beside UTC")
    func localTime() throws {
        let date = Date(timeIntervalSince1970: 1_796_228_640)  // 2026-12-02 16:24 UTC
        #expect(ReportWording.time(date, in: try #require(TimeZone(identifier: "UTC"))) == "2026-12-02 16:24 UTC")
        let berlin = ReportWording.time(date, in: try #require(TimeZone(identifier: "Europe/Berlin")))
        #expect(
            berlin == "2026-12-02 17:24 CET (16:24 UTC)" || berlin == "2026-12-02 17:24 UTC+01:00 (16:24 UTC)",
            "\(berlin)")
        #expect(
            ReportWording.time(date, in: try #require(TimeZone(identifier: "Pacific/Kiritimati"))).hasPrefix(
                "2026-12-03 06:24"))
        #expect(
            ReportWording.time(date, in: try #require(TimeZone(identifier: "Pacific/Kiritimati"))).hasSuffix(
                "(2026-12-02 16:24 UTC)"))
    }

    @Test("grouped numbers and chart ticks")
    func formatting() {
        #expect(CampaignReportHTML.grouped(100_000_000) == "100,000,000")
        #expect(CampaignReportHTML.grouped(999) == "999")
        #expect(CampaignReportHTML.percent(15, of: 40_003) == "<0.1%")
        #expect(CampaignReportHTML.percent(0, of: 40_003) == "0.0%")
        #expect(CampaignReportHTML.percent(39_585, of: 40_003) == "99.0%")
        #expect(SVGLineChart.ticks(upTo: 930) == [0, 250, 500, 750, 1000])
        #expect(SVGLineChart.duration(150) == "2m30s")
    }
}
