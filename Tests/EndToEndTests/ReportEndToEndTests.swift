import Foundation
import Testing

/// `send --progress json`, `send --summary/--report` and `apns-bulk report` on the sample campaign, with the
/// report opened in a real headless browser (Debian's chromium; scripts/test.sh installs it when missing).
@Suite("progress and report end to end", .serialized)
struct ReportEndToEndTests {
    /// The client options without `--progress none`.
    private func clientArguments(_ mock: MockProcess) -> [String] {
        var arguments = mock.clientArguments
        if let index = arguments.firstIndex(of: "--progress") { arguments.removeSubrange(index...(index + 1)) }
        return arguments
    }

    @Test("--progress json: one JSON object per line, the last with the finished run's counts and 100 % read")
    func progressJSON() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let run = try Tool.run(
            [
                "send", Tool.path("samples/campaign.ndjson"), "--results", out.file("results.ndjson"),
                "--progress", "json",
            ] + clientArguments(mock))
        _ = try mock.stop()
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        let objects = run.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        let last = try #require(objects.last, "no JSON progress line in: \(run.stderr)")
        #expect(last["records"] as? Int == 17)
        #expect(last["delivered"] as? Int == 8)
        #expect(last["pruned"] as? Int == 3)
        #expect(last["invalid"] as? Int == 5)
        #expect(last["failed"] as? Int == 0)
        #expect(last["percent_done"] as? Double == 100, "a regular file: percent done from bytes read")
        #expect(last["in_flight"] is Int)
        #expect(last["retries_pending"] is Int)
    }

    @Test("send --summary carries a timeline; send --report and report write the campaign's figures")
    func reportFigures() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let results = out.file("results.ndjson")
        let send = try Tool.run(
            [
                "send", Tool.path("samples/campaign.ndjson"), "--results", results,
                "--summary", out.file("summary.json"), "--report", out.file("send-report.html"),
                "--progress", "none",
            ] + clientArguments(mock))
        _ = try mock.stop()
        #expect(send.status == 2, "exit \(send.status): \(send.stderr)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out.file("summary.json"))))
                as? [String: Any])
        let timeline = try #require(summary["timeline"] as? [String: Any])
        let samples = try #require(timeline["samples"] as? [[String: Any]])
        #expect(samples.last?["answered"] as? Int == 17)
        #expect((try String(contentsOfFile: out.file("send-report.html"), encoding: .utf8)).contains("Records"))

        let html = out.file("report.html")
        let report = try Tool.run([
            "report", results, "--summary", out.file("summary.json"), "--html", html,
            "--json", out.file("report.json"),
        ])
        #expect(report.status == 0, "\(report.stderr)")
        let figures = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out.file("report.json"))))
                as? [String: Any])
        #expect(figures["records"] as? Int == 17)
        #expect(figures["tokens_to_prune"] as? Int == 3)
        #expect(figures["duplicates"] as? Int == 1)
        #expect((figures["outcomes"] as? [String: Int])?["input_error"] == 5)
        #expect((figures["attempts"] as? [String: Any])?["total"] as? Int == 11)
        #expect(figures["series"] != nil, "the summary's timeline gives the charts")
    }

    @Test(
        "the report renders in a real headless browser: the page text holds the figures, the screenshot is a picture",
        .enabled(
            if: Self.chromium != nil,
            "chromium is not installed and could not be (scripts/test.sh runs apt-get install -y chromium)"))
    func reportInBrowser() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let results = out.file("results.ndjson")
        let send = try Tool.run(
            [
                "send", Tool.path("samples/campaign.ndjson"), "--results", results,
                "--summary", out.file("summary.json"), "--progress", "none",
            ] + clientArguments(mock))
        _ = try mock.stop()
        #expect(send.status == 2, "exit \(send.status): \(send.stderr)")
        let html = out.file("report.html")
        let report = try Tool.run(["report", results, "--summary", out.file("summary.json"), "--html", html])
        #expect(report.status == 0, "\(report.stderr)")
        try Self.checkInBrowser(html: html, directory: out)
    }

    @Test("report over shards: the replay command names the shards that have records to send again")
    func shardsAndReplayCommand() throws {
        let out = try TemporaryDirectory()
        let shard0 = out.file("results-0.ndjson")
        let shard1 = out.file("results-1.ndjson")
        try Data(
            """
            {"file":"c.ndjson","line":1,"token":"aa","outcome":"delivered","status":200,"attempts":1}
            {"file":"c.ndjson","line":3,"token":"cc","outcome":"retryable","status":429,"reason":"TooManyRequests","attempts":5,"payload":{}}

            """.utf8
        ).write(to: URL(fileURLWithPath: shard0))
        try Data(
            """
            {"file":"c.ndjson","line":2,"token":"bb","outcome":"prune","status":410,"reason":"Unregistered","timestamp":5,"attempts":1,"payload":{}}

            """.utf8
        ).write(to: URL(fileURLWithPath: shard1))
        let run = try Tool.run(["report", shard0, shard1, "--json", out.file("r.json")])
        #expect(run.status == 0, "\(run.stderr)")
        let figures = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out.file("r.json"))))
                as? [String: Any])
        #expect(figures["records"] as? Int == 3)
        let next = try #require(figures["next_steps"] as? [String: String])
        #expect(next["replay"] == "apns-bulk replay \(shard0) --results replay.ndjson")
        #expect(next["prune"] == "apns-bulk prune \(shard0) \(shard1) --format csv --output prune.csv")
        let missing = try Tool.run(["report", out.file("nope.ndjson"), "--html", out.file("x.html")])
        #expect(missing.status == 1, "an unreadable result file: \(missing.stderr)")
    }

    @Test(
        "two shards sent one after the other: the report names each run's inputs, topic, times, and draws each shard as its own line",
        .enabled(
            if: Self.chromium != nil,
            "chromium is not installed and could not be (scripts/test.sh runs apt-get install -y chromium)"))
    func shardsInBrowser() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let campaign = Tool.path("samples/campaign.ndjson")
        var reportArguments = ["report"]
        var summaries = ["--summary"]
        for shard in 0..<2 {
            let results = out.file("results-\(shard).ndjson")
            let send = try Tool.run(
                [
                    "send", campaign, "--results", results, "--shard", "\(shard)/2",
                    "--summary", out.file("summary-\(shard).json"),
                ] + mock.clientArguments)
            #expect([0, 2].contains(send.status), "shard \(shard): exit \(send.status): \(send.stderr)")
            reportArguments.append(results)
            summaries.append(out.file("summary-\(shard).json"))
            usleep(1_200_000)  // the second shard starts after a gap, as a shard retried later does
        }
        _ = try mock.stop()
        let html = out.file("report.html")
        let report = try Tool.run(reportArguments + summaries + ["--html", html, "--json", out.file("report.json")])
        #expect(report.status == 0, "\(report.stderr)")
        let figures = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out.file("report.json"))))
                as? [String: Any])
        let runs = try #require(figures["runs"] as? [[String: Any]])
        #expect(runs.count == 2)
        for run in runs {
            #expect(run["inputs"] as? [String] == [campaign], "\(run)")
            #expect((run["topics"] as? [String: Int])?.keys.contains(MockProcess.topic) == true, "\(run)")
            #expect(
                run["state"] as? String == "finished" && run["started_at"] is String && run["finished_at"] is String,
                "\(run)")
            #expect((run["duration_seconds"] as? Double).map { $0 >= 0 && $0 < 60 } == true, "\(run)")
        }
        let series = try #require(figures["series"] as? [String: Any])
        let lines = try #require(series["runs"] as? [[String: Any]])
        #expect(lines.compactMap { $0["label"] as? String } == ["shard 0/2", "shard 1/2"])

        let dom = try Self.domInBrowser(html: html, directory: out)
        #expect(dom.contains("shard 0/2 results/s") && dom.contains("shard 1/2 results/s"), "\(dom.prefix(600))")
        #expect(dom.contains("<table id=\"runs\">"))
        #expect(dom.contains("<code>\(campaign)</code>"), "the runs table names the input")
        #expect(dom.contains("<code>\(MockProcess.topic)</code>"), "the runs table names the topic")
        #expect(
            dom.contains("id=\"campaign-times\"") && dom.contains("Sent from "), "the header says when the campaign ran"
        )
    }

    // MARK: - The browser

    static let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Headless chromium's flags, its profile in `directory`.
    static func chromiumFlags(_ directory: TemporaryDirectory) -> [String] {
        [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(directory.file("chromium-profile"))",
        ]
    }

    /// The page's DOM as headless chromium builds it.
    static func domInBrowser(html: String, directory: TemporaryDirectory) throws -> String {
        try run(try #require(Self.chromium), chromiumFlags(directory) + ["--dump-dom", "file://\(html)"])
    }

    /// Renders the page headless: the DOM must hold the figures, the screenshot must be a real picture.
    static func checkInBrowser(html: String, directory: TemporaryDirectory) throws {
        let chromium = try #require(Self.chromium)
        let flags = chromiumFlags(directory)
        let dom = try domInBrowser(html: html, directory: directory)
        #expect(dom.contains("<div class=\"label\">Records</div><div class=\"value\">17</div>"), "\(dom.prefix(400))")
        #expect(dom.contains("<div class=\"label\">Tokens to prune</div><div class=\"value\">3</div>"))
        #expect(dom.contains("<div class=\"label\">Duplicates</div><div class=\"value\">1</div>"))
        #expect(dom.contains("Unregistered"))
        #expect(dom.contains("Nothing to replay"))
        #expect(
            dom.contains("<strong>8 of 16</strong> people's devices: accepted by Apple for delivery"),
            "the headline, duplicates left out")
        #expect(dom.contains("id=\"accepted-means\""))
        #expect(
            dom.contains("<h2>What happened</h2>")
                && dom.contains("Devices no longer reachable (app removed, or the phone no longer registered)"))
        #expect(
            dom.contains("<h2>What was sent</h2>") && dom.contains("<div class=\"sample-title\">Spring sale</div>"),
            "the first accepted record's alert, read from the campaign file")
        #expect(dom.contains("Technical detail (for the operators)"))
        // Phone width: a copy of the page with a script (the report itself has none) that writes how wide the
        // document is; nothing may stick out past the 390 px viewport.
        let probe = directory.file("probe.html")
        let page = try String(contentsOfFile: html, encoding: .utf8)
        try Data(
            page.replacingOccurrences(
                of: "</body>",
                with: "<script>document.body.setAttribute('data-width', "
                    + "document.documentElement.scrollWidth + 'x' + window.innerWidth + ' ' + [...document.querySelectorAll('body *')]"
                    + ".filter(e => e.getBoundingClientRect().right > window.innerWidth).slice(0, 5)"
                    + ".map(e => e.tagName + '.' + e.className).join(' '))</script></body>"
            ).utf8
        )
        .write(to: URL(fileURLWithPath: probe))
        let phone = try run(chromium, flags + ["--window-size=390,2400", "--dump-dom", "file://\(probe)"])
        let width = phone.range(of: #"data-width="[0-9]+x[0-9]+[^"]*""#, options: .regularExpression).map {
            String(phone[$0])
        }
        let sizes =
            (width ?? "").split(separator: " ").first.map(String.init)?.split(whereSeparator: { !$0.isNumber })
            .compactMap { Int($0) } ?? []
        #expect(
            sizes.count == 2 && sizes[0] <= sizes[1] && sizes[1] <= 500,
            "document width x viewport at phone width (headless chromium keeps a window 500 px wide at least): \(width ?? "none")"
        )
        let png = directory.file("report.png")
        _ = try run(
            chromium, flags + ["--hide-scrollbars", "--window-size=1000,1400", "--screenshot=\(png)", "file://\(html)"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: png))
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        #expect(bytes.count > 20_000, "a blank page compresses to a few KB; this one is \(bytes.count) bytes")
        let colours = try run("/usr/bin/env", ["python3", Tool.path("scripts/png-colours.py"), png])
        let distinct = Int(colours.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(distinct > 16, "not a single colour: \(distinct) distinct colours")
    }

    /// Runs a program to completion (killed after 120 s) and returns its standard output.
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let directory = try TemporaryDirectory()
        let out = directory.file("stdout")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }
}
