import APNSCore
import Foundation

/// Renders a `CampaignReport` as one self-contained HTML page: inline CSS and SVG charts, no script, no font or
/// image fetched from anywhere, readable without JavaScript and printable (print CSS keeps sections whole).
public struct CampaignReportHTML {
    /// The report to render.
    public var report: CampaignReport
    /// The page's title.
    public var title: String
    /// When the page was made, shown in its footer.
    public var generatedAt: Date
    /// The zone the page's times are shown in, beside UTC: the machine's.
    public var timeZone: TimeZone

    /// A page for `report`.
    public init(
        report: CampaignReport, title: String = "apns-bulk campaign report", generatedAt: Date = Date(),
        timeZone: TimeZone = .current
    ) {
        self.report = report
        self.title = title
        self.generatedAt = generatedAt
        self.timeZone = timeZone
    }

    /// The page.
    public func render() -> String {
        var page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        page += "<title>\(HTMLText.escaped(title))</title><style>\(Self.css)</style></head><body>\n"
        page += header + headline + whatHappened + whatWasSent
        page += "<div id=\"technical\"><h2 class=\"part\">Technical detail (for the operators)</h2>\n"
        page += nextSteps + keyFigures + outcomes + reasons + attempts + charts + files + "</div>\n"
        page += "<footer>Report made \(HTMLText.escaped(time(generatedAt))) by apns-bulk</footer>\n</body></html>\n"
        return page
    }

    /// The title and, in plain words, when the campaign was sent (the files it was read from are named in the
    /// technical part, `files`).
    private var header: String {
        var line = ""
        let facts = report.resultFiles.compactMap { report.runs[$0] }
        if let start = facts.compactMap(\.startedAt).min() {
            line = "Sent from \(time(Date(timeIntervalSince1970: start)))"
            let ends = facts.map(\.finishedAt)
            if !ends.isEmpty, ends.allSatisfy({ $0 != nil }), let end = ends.compactMap({ $0 }).max() {
                line += " to \(time(Date(timeIntervalSince1970: end))) (\(Self.plainDuration(end - start)))"
            } else {
                line += "; still going, or stopped before the end"
            }
        }
        return "<header><h1>\(HTMLText.escaped(title))</h1>"
            + (line.isEmpty ? "" : "<p class=\"muted\" id=\"campaign-times\">\(HTMLText.escaped(line))</p>")
            + "</header>\n"
    }

    /// How long something took, as people say it: "under a minute", "about 25 minutes", "2 hours 10 minutes".
    static func plainDuration(_ seconds: Double) -> String {
        let minutes = Int((seconds / 60).rounded())
        if seconds < 60 { return "under a minute" }
        if minutes < 60 { return minutes == 1 ? "about a minute" : "about \(minutes) minutes" }
        let hours = minutes / 60
        let rest = minutes % 60
        let hourText = CountedNoun.text(hours, "hour")
        return rest == 0 ? "about " + hourText : "about \(hourText) \(CountedNoun.text(rest, "minute"))"
    }

    /// A time in the page's zone beside UTC.
    func time(_ date: Date) -> String { ReportWording.time(date, in: timeZone) }

    private var keyFigures: String {
        let delivered = report.count(.delivered)
        let cards: [(String, String, String, String)] = [
            ("records", "Records", Self.grouped(report.records), "one result line each"),
            (
                "delivered", "Delivered", Self.grouped(delivered),
                "accepted by APNs, " + Self.percent(delivered, of: report.records)
            ),
            ("prune", "Tokens to prune", Self.grouped(report.tokensToPrune), "distinct tokens"),
            ("retryable", "Retryable", Self.grouped(report.count(.retryable)), "send again with replay"),
            ("in_doubt", "In doubt", Self.grouped(report.count(.inDoubt)), "answer lost; may have arrived"),
            ("not_sent", "Not sent", Self.grouped(report.count(.notSent)), "campaign stopped early"),
            ("expired", "Expired", Self.grouped(report.count(.expired)), "never sent: the deadline passed"),
            ("input_error", "Invalid", Self.grouped(report.count(.inputError) - report.rejected), "never sent"),
            ("rejected", "Rejected", Self.grouped(report.rejected), "sent; APNs refused the request"),
            ("duplicate", "Duplicates", Self.grouped(report.count(.duplicate)), "never sent"),
            ("attempts", "Attempts", Self.grouped(report.attempts), "requests on the wire"),
        ]
        var out = "<section><h3>Key figures</h3><div class=\"cards\" aria-label=\"key figures\">"
        for (id, label, value, note) in cards {
            out += "<div class=\"card\" id=\"figure-\(id)\"><div class=\"label\">\(label)</div>"
            out += "<div class=\"value\">\(value)</div><div class=\"note\">\(HTMLText.escaped(note))</div></div>"
        }
        return out + "</div></section>\n"
    }

    private var nextSteps: String {
        var out = "<section><h3>Next steps</h3>"
        for run in report.unfinished {
            out += "<p class=\"warning\" id=\"unfinished\"><strong>This run is unfinished:</strong> "
            out +=
                "\(HTMLText.escaped(run.resultsPath)) has \(Self.grouped(run.answered)) \(CountedNoun.noun(run.answered, "record")) answered so far; its "
            out += "run is still going, or was stopped before it finished. The figures below cover those records only. "
            out += "Finish it first with:</p><pre class=\"finish-command\">"
            out += "\(HTMLText.escaped(run.command ?? "the same send command with --resume"))</pre>"
        }
        for run in report.stopped {
            out += "<p class=\"warning\" id=\"stopped\"><strong>This campaign stopped early:</strong> "
            out += "\(HTMLText.escaped(run.why)). \(HTMLText.escaped(PrintableText.escaping(run.advice))):</p>"
            out += "<pre class=\"continue-command\">\(HTMLText.escaped(run.command))</pre>"
        }
        if let replay = report.replayCommand() {
            out +=
                "<p>\(Self.grouped(report.replayableTotal)) \(CountedNoun.noun(report.replayableTotal, "record")) may still be delivered "
            out +=
                "(retryable \(Self.grouped(report.count(.retryable))), in doubt \(Self.grouped(report.count(.inDoubt))), "
            out += "not sent \(Self.grouped(report.count(.notSent)))"
            if report.rejectedForTopic > 0 {
                out += ", rejected for their topic \(Self.grouped(report.rejectedForTopic))"
            }
            if report.rejectedForPushType > 0 {
                out += ", rejected for their push type \(Self.grouped(report.rejectedForPushType))"
            }
            out += ")."
            // The safe replay first: in-doubt records may have arrived already, so sending them again may send twice.
            if let safe = report.replayCommandExcludingInDoubt() {
                out += " Send again what cannot have arrived (retryable, not sent) with:</p>"
                out += "<pre id=\"replay-command\">\(HTMLText.escaped(safe))</pre>"
                out += "<p>In-doubt records (\(Self.grouped(report.count(.inDoubt)))) may have arrived already: "
                out += "this one sends them too, and may deliver some twice:</p>"
                out += "<pre id=\"replay-command-with-in-doubt\">\(HTMLText.escaped(replay))</pre>"
            } else {
                out += " Send them again with:</p>"
                out += "<pre id=\"replay-command\">\(HTMLText.escaped(replay))</pre>"
            }
            if report.rejectedForTopic > 0 {
                out +=
                    "<p>APNs rejected the campaign's topic: replace \(CampaignReport.topicPlaceholder) with the app's "
                out += "bundle id (plus the suffix its push type needs) before running it.</p>"
            }
            if report.rejectedForPushType > 0 {
                out += "<p>APNs rejected the campaign's push type: replace \(CampaignReport.pushTypePlaceholder) with "
                out += "the right one (alert, background, voip, …).</p>"
            }
        } else if !report.stopped.isEmpty {
            out += "<p>Nothing else to replay: the stopped campaign's own command sends what it did not.</p>"
        } else if report.unfinished.isEmpty {
            out += "<p>Nothing to replay: every record has its final outcome.</p>"
        } else {
            out += "<p>Nothing to replay yet among the records answered so far.</p>"
        }
        if let prune = report.pruneCommand() {
            out +=
                "<p>\(Self.grouped(report.tokensToPrune)) \(report.tokensToPrune == 1 ? "token is" : "tokens are") dead or wrong for the app. List them for deletion with:</p>"
            out += "<pre id=\"prune-command\">\(HTMLText.escaped(prune))</pre>"
        }
        return out + "</section>\n"
    }

    private var outcomes: String {
        var out = "<section><h3>Outcomes</h3>"
        out +=
            "<table><thead><tr><th>outcome</th><th class=\"n\">records</th><th class=\"n\">share</th></tr></thead><tbody>"
        for outcome in RecordOutcome.allCases {
            let count = report.count(outcome)
            out +=
                "<tr><td><span class=\"swatch\" style=\"background:\(Self.color(outcome))\"></span>\(outcome.rawValue)</td>"
            out +=
                "<td class=\"n\">\(Self.grouped(count))</td><td class=\"n\">\(Self.percent(count, of: report.records))</td></tr>"
        }
        out += "</tbody></table>"
        if let first = report.firstUniqueID {
            // Shown, never linked: the console needs the user's Apple account, and the report links nowhere outside.
            out +=
                "<p>\(Self.grouped(report.deliveredWithUniqueID)) delivered \(report.deliveredWithUniqueID == 1 ? "record carries" : "records carry") an apns_unique_id "
            out += "(development environment) to look up in Apple's Push Notifications Console, the first "
            out +=
                "<code id=\"first-unique-id\">\(HTMLText.escaped(first))</code>; the result lines hold every one.</p>"
        }
        return out + "</section>\n"
    }

    private var reasons: String {
        let rows = report.reasons
        guard !rows.isEmpty else { return "" }
        var out = "<section><h3>Reasons</h3><table><thead><tr><th>outcome</th><th>reason</th>"
        out += "<th class=\"n\">records</th></tr></thead><tbody>"
        for row in rows {
            out += "<tr><td>\(row.outcome.rawValue)</td><td>\(HTMLText.escaped(row.reason))</td>"
            out += "<td class=\"n\">\(Self.grouped(row.count))</td></tr>"
        }
        return out + "</tbody></table></section>\n"
    }

    private var attempts: String {
        var out =
            "<section><h3>Attempts</h3><p>\(Self.grouped(report.attempts)) \(report.attempts == 1 ? "request" : "requests") reached the wire for "
        out +=
            "\(Self.grouped(report.records)) \(CountedNoun.noun(report.records, "record")).</p><table><thead><tr><th>requests per record</th>"
        out += "<th class=\"n\">records</th></tr></thead><tbody>"
        for (attempts, count) in report.recordsByAttempts.sorted(by: { $0.key < $1.key }) {
            let label = attempts == 0 ? "0 (never sent)" : "\(attempts)"
            out += "<tr><td>\(label)</td><td class=\"n\">\(Self.grouped(count))</td></tr>"
        }
        return out + "</tbody></table></section>\n"
    }

    private var charts: String {
        var out = "<section class=\"charts\"><h3>Over time</h3>"
        guard let series = report.series() else {
            out += "<p class=\"muted\">No timeline: pass the runs' <code>--summary</code> files (written by "
            out += "<code>send --summary</code>) to see throughput, latency and requests in flight over time.</p>"
            return out + "</section>\n"
        }
        let points = series.points
        out +=
            "<p class=\"muted\">\(report.timelines.count) run\(report.timelines.count == 1 ? "" : "s") side by side, "
        out += "in \(Self.grouped(points.count)) steps of \(SVGLineChart.duration(series.bucketSeconds)).</p>"
        let peak = points.map(\.answersPerSecond).max() ?? 0
        var throughput: [SVGLineChart.Series]
        if series.runs.count > 1 {
            // Shards and runs each as a labelled line on the one time axis, drawn over the grey total of them all.
            throughput = [
                .init(
                    name: "all runs results/s", color: "#9aa0a6",
                    points: points.map { ($0.seconds, $0.answersPerSecond) }, dashed: true)
            ]
            throughput += series.runs.enumerated().map { number, run in
                .init(
                    name: "\(run.label) results/s", color: Self.runColors[number % Self.runColors.count],
                    points: zip(points, run.answersPerSecond).map { ($0.seconds, $1) })
            }
        } else {
            throughput = [
                .init(name: "results/s", color: "#1f77b4", points: points.map { ($0.seconds, $0.answersPerSecond) }),
                .init(
                    name: "requests/s", color: "#9aa0a6", points: points.map { ($0.seconds, $0.requestsPerSecond) },
                    dashed: true),
            ]
        }
        out += chart(
            SVGLineChart(title: "Throughput", formatY: { Self.grouped(Int($0.rounded())) + "/s" }, series: throughput),
            caption: series.runs.count > 1
                ? "Throughput of each run and of all together (peak \(Self.grouped(Int(peak.rounded()))) results/s)"
                : "Throughput (peak \(Self.grouped(Int(peak.rounded()))) results/s)")
        out += chart(
            SVGLineChart(
                title: "Latency", formatY: { Self.milliseconds($0 / 1000) },
                series: [
                    .init(
                        name: "p50", color: "#2ca02c",
                        points: points.map { ($0.seconds, $0.latencyP50.map { $0 * 1000 }) }),
                    .init(
                        name: "p99", color: "#d62728",
                        points: points.map { ($0.seconds, $0.latencyP99.map { $0 * 1000 }) }),
                ]), caption: "Latency p50 and p99")
        var flight: [SVGLineChart.Series] = [
            .init(
                name: "in flight", color: "#9467bd", points: points.map { ($0.seconds, $0.inFlight.map(Double.init)) })
        ]
        if series.hasWindow {
            flight.append(
                .init(
                    name: "window", color: "#ff7f0e", points: points.map { ($0.seconds, $0.window.map(Double.init)) },
                    dashed: true))
        }
        out += chart(
            SVGLineChart(title: "Requests in flight", formatY: { Self.grouped(Int($0.rounded())) }, series: flight),
            caption: series.hasWindow ? "Requests in flight and the in-flight window" : "Requests in flight")
        return out + "</section>\n"
    }

    private func chart(_ chart: SVGLineChart, caption: String) -> String {
        var out = "<figure>" + chart.svg() + "<figcaption>\(HTMLText.escaped(caption)): "
        out += chart.series.map { line in
            "<span class=\"key\"><span class=\"swatch\" style=\"background:\(line.color)\"></span>\(HTMLText.escaped(line.name))</span>"
        }.joined(separator: " ")
        return out + "</figcaption></figure>"
    }

    /// One row per result file: its inputs, topics, when its campaign ran, how it ended, what is left to replay.
    private var files: String {
        let files = report.resultFiles.count
        var read = "Read from " + CountedNoun.text(files, "result file")
        if report.summaryCount > 0 {
            read += " and " + CountedNoun.text(report.summaryCount, "summary", plural: "summaries")
        }
        var out =
            "<section><h3>Runs</h3><p class=\"muted\" id=\"read-from\">\(read).</p><div class=\"scroll\"><table id=\"runs\"><thead><tr><th>Result file</th><th>Inputs</th><th>Topics</th>"
        out +=
            "<th>Started</th><th>Finished</th><th class=\"n\">Duration</th><th>State</th><th class=\"n\">To replay</th>"
        out += "</tr></thead><tbody>"
        for file in report.resultFiles {
            let facts = report.runs[file] ?? CampaignReport.RunFacts()
            let counts = report.replayable[file]
            let inputs =
                facts.inputs.isEmpty
                ? "–"
                : (facts.command == "replay" ? "replay of " : "")
                    + facts.inputs.map { "<code>\(HTMLText.escaped($0))</code>" }.joined(separator: ", ")
            var topics = facts.topics.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
                .map { "<code>\(HTMLText.escaped($0.key))</code> \(Self.grouped($0.value))" }.joined(separator: ", ")
            if facts.otherTopicRecords > 0 { topics += ", other topics \(Self.grouped(facts.otherTopicRecords))" }
            let state: String
            switch facts.state {
            case .finished?, .stopped?: state = facts.stoppedEarly.map { "stopped early: " + $0 } ?? "finished"
            case .unfinished?: state = "unfinished"
            case nil: state = "–"
            }
            out +=
                "<tr><td><code>\(HTMLText.escaped(file))</code></td><td>\(inputs)</td><td>\(topics.isEmpty ? "–" : topics)</td>"
            out +=
                "<td class=\"t\">\(facts.startedAt.map { Self.timestamp(Date(timeIntervalSince1970: $0)) } ?? "–")</td>"
            out +=
                "<td class=\"t\">\(facts.finishedAt.map { Self.timestamp(Date(timeIntervalSince1970: $0)) } ?? "–")</td>"
            out += "<td class=\"n\">\(facts.durationSeconds.map(SVGLineChart.duration) ?? "–")</td>"
            out += "<td>\(HTMLText.escaped(state))</td><td class=\"n\">\(Self.grouped(counts?.total ?? 0))</td></tr>"
        }
        out += "</tbody></table></div>"
        if !report.tornLines.isEmpty {
            out += "<p>Torn last lines skipped (a crash while writing; <code>send --resume</code> redoes them): "
            out += report.tornLines.map { "<code>\(HTMLText.escaped($0))</code>" }.joined(separator: ", ") + "</p>"
        }
        return out + "</section>\n"
    }

    /// Colours of the runs' lines, told apart from the totals' blue and the outcome colours' meaning.
    static let runColors = ["#e377c2", "#17becf", "#bcbd22", "#8c564b", "#ff7f0e", "#2ca02c", "#9467bd", "#7f7f7f"]

    static func color(_ outcome: RecordOutcome) -> String {
        switch outcome {
        case .delivered: return "#2ca02c"
        case .prune: return "#8c564b"
        case .retryable: return "#ff7f0e"
        case .inputError: return "#d62728"
        case .duplicate: return "#7f7f7f"
        case .notSent: return "#bcbd22"
        case .inDoubt: return "#9467bd"
        case .expired: return "#393b79"
        }
    }

    /// `1,234,567`.
    static func grouped(_ value: Int) -> String { ProgressSnapshot.grouped(value) }

    /// `99.0%`; a share too small to show as 0.1 % is `<0.1%`, never a misleading `0.0%`.
    static func percent(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "–" }
        let share = Double(part) / Double(whole) * 100
        return part > 0 && share < 0.05 ? "<0.1%" : String(format: "%.1f%%", share)
    }

    static func milliseconds(_ seconds: Double) -> String {
        let ms = seconds * 1000
        return ms >= 10 || ms == 0 ? String(format: "%.0f ms", ms) : String(format: "%.1f ms", ms)
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    static let css = """
        :root{color-scheme:light}
        body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;margin:24px auto;\
        max-width:960px;padding:0 16px;color:#1d1d1f;background:#fff;line-height:1.4}
        h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.25em;margin:28px 0 8px;border-bottom:1px solid #e3e3e3;padding-bottom:4px}\
        h3{font-size:1.05em;margin:24px 0 6px}h2.part{margin-top:44px;border-bottom:2px solid #999;color:#444}\
        .headline{font-size:1.45em;line-height:1.3;margin:18px 0 10px}.headline strong{color:#1a7f1a}.share{color:#666;font-size:.8em}\
        body{overflow-wrap:break-word}code{word-break:break-all}.scroll{overflow-x:auto;max-width:100%}\
        .sample{border:1px solid #e0e0e0;border-radius:10px;padding:10px 12px;margin:10px 0;max-width:480px}\
        .bubble{background:#f2f2f7;border-radius:12px;padding:8px 12px}.sample-title{font-weight:600}\
        .sample figcaption{margin-top:6px;font-size:.85em;color:#555}details summary{cursor:pointer;font-size:.85em;color:#555}
        .warning{border-left:4px solid #c0392b;padding:6px 10px;background:#fdf2f0}.muted,.note,footer{color:#666}.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px;margin-top:16px}
        .card{border:1px solid #e0e0e0;border-radius:8px;padding:10px 12px}.card .label{font-size:.85em;color:#555}
        .card .value{font-size:1.6em;font-weight:600;font-variant-numeric:tabular-nums}.card .note{font-size:.75em}
        #figure-delivered .value{color:#1a7f1a}#figure-prune .value{color:#8c564b}#figure-retryable .value,#figure-in_doubt .value{color:#c25e00}#figure-expired .value{color:#393b79}
        table{border-collapse:collapse;margin-top:8px;display:block;overflow-x:auto;max-width:100%}th,td{text-align:left;padding:3px 12px 3px 0;border-bottom:1px solid #eee}
        th{font-weight:600;font-size:.9em;color:#444}.n{text-align:right;font-variant-numeric:tabular-nums}.t{white-space:nowrap}
        pre{background:#f5f5f7;border:1px solid #e3e3e3;border-radius:6px;padding:8px 10px;white-space:pre-wrap;word-break:break-all}
        .swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;vertical-align:baseline}
        .key{margin-right:12px;white-space:nowrap}figure{margin:12px 0 20px}figcaption{font-size:.9em;color:#444}
        .files{padding-left:18px}footer{margin-top:32px;font-size:.8em}
        @media print{body{margin:0;max-width:none}section,figure,.card{break-inside:avoid}pre{white-space:pre-wrap}
        .card{border-color:#999}@page{margin:14mm}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
        """
}

// MARK: - HTMLText

/// Text made safe for HTML element content and attribute values: control characters (ESC, BEL, line breaks,
/// bidirectional controls) escaped as on a terminal (`PrintableText`), then the HTML specials as entities.
enum HTMLText {
    static func escaped(_ text: String) -> String {
        let printable = PrintableText.escaping(text)
        var out = ""
        out.reserveCapacity(printable.utf8.count)
        for character in printable {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
