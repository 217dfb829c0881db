import APNSCore
import Foundation

/// The report's first part, for the people who ordered the campaign: the headline in plain words, what
/// "accepted" promises, what happened to every entry under plain labels, and a sample of what was sent.
extension CampaignReportHTML {
    /// Devices the campaign was for: every entry but the duplicates, which name a device already counted.
    var devices: Int { report.records - report.count(.duplicate) }

    var headline: String {
        let accepted = report.count(.delivered)
        var out = "<section id=\"summary\" aria-label=\"summary\">"
        if report.records == 0 {
            out +=
                "<p class=\"headline\" id=\"headline\">Nothing to show yet: no notification of this campaign has an answer.</p>"
        } else {
            out +=
                "<p class=\"headline\" id=\"headline\"><strong>\(Self.grouped(accepted)) of \(Self.grouped(devices))</strong> "
            out += "people's devices: accepted by Apple for delivery"
            out += " <span class=\"share\">(\(Self.percent(accepted, of: devices)))</span></p>"
        }
        if !report.unfinished.isEmpty {
            out += "<p class=\"warning\">Not finished yet: these figures cover only the entries answered so far.</p>"
        } else if !report.stopped.isEmpty {
            out += "<p class=\"warning\">The campaign stopped before the end; the technical detail below says why and "
            out += "how to send the rest.</p>"
        }
        out += "<p id=\"accepted-means\"><strong>What “accepted” means:</strong> Apple's push service took the "
        out += "notification and will try to deliver it. It is not a promise that it was shown: a phone that is "
        out += "switched off or offline gets it later, or not at all if it stays offline past the notification's "
        out += "expiry; when several wait for the same device Apple may deliver only the latest; and Apple does not "
        out += "tell us whether a notification was displayed or opened.</p>"
        return out + "</section>\n"
    }

    /// Every entry's outcome under its plain label, the outcome bar above, and what can still be done.
    var whatHappened: String {
        var out = "<section id=\"what-happened\"><h2>What happened</h2>" + outcomeBar
        out +=
            "<div class=\"scroll\"><table><thead><tr><th>outcome</th><th class=\"n\">entries</th><th class=\"n\">share</th>"
        out += "</tr></thead><tbody>"
        for outcome in ReportWording.plainOrder where report.count(outcome) > 0 || outcome == .delivered {
            let count = report.count(outcome)
            out += "<tr><td><span class=\"swatch\" style=\"background:\(Self.color(outcome))\"></span>"
            out += "\(ReportWording.plainLabel(outcome))</td><td class=\"n\">\(Self.grouped(count))</td>"
            out += "<td class=\"n\">\(Self.percent(count, of: report.records))</td></tr>"
        }
        out += "</tbody></table></div>"
        var next: [String] = []
        if report.replayableTotal > 0 {
            let count = report.replayableTotal
            next.append(
                "\(Self.grouped(count)) \(count == 1 ? "notification was" : "notifications were") not accepted yet "
                    + "and can be sent again (the operators' part below says how).")
        }
        if report.tokensToPrune > 0 {
            next.append(
                "\(Self.grouped(report.tokensToPrune)) \(report.tokensToPrune == 1 ? "device is" : "devices are") "
                    + "no longer reachable and should be removed from the list.")
        }
        if !next.isEmpty { out += "<p>" + next.joined(separator: " ") + "</p>" }
        return out + "</section>\n"
    }

    /// One horizontal bar split by outcome, each part titled with its plain label.
    var outcomeBar: String {
        guard report.records > 0 else { return "" }
        var out = "<svg viewBox=\"0 0 1000 28\" width=\"100%\" role=\"img\" aria-label=\"entries by outcome\">"
        var x = 0.0
        for outcome in ReportWording.plainOrder where report.count(outcome) > 0 {
            let width = Double(report.count(outcome)) / Double(report.records) * 1000
            out += "<rect x=\"\(SVGLineChart.fixed(x))\" y=\"0\" width=\"\(SVGLineChart.fixed(width))\" height=\"28\" "
            out += "fill=\"\(Self.color(outcome))\"><title>\(ReportWording.plainLabel(outcome)): "
            out += "\(Self.grouped(report.count(outcome)))</title></rect>"
            x += width
        }
        return out + "</svg>"
    }

    /// Up to three notifications as sent: the alert's title and body, and the payload's JSON.
    var whatWasSent: String {
        var out = "<section id=\"what-was-sent\"><h2>What was sent</h2>"
        guard !report.samples.isEmpty else {
            out += "<p class=\"muted\" id=\"no-sample\">No sample of the message can be shown: the record of what "
            out += "Apple accepted does not keep the message itself, and the campaign's original list could not be "
            out += "read here.</p>"
            return out + "</section>\n"
        }
        let topics = Set(report.samples.map(\.topic)).count
        out +=
            "<p class=\"muted\">\(report.samples.count == 1 ? "The first notification" : "The first \(report.samples.count) different notifications")"
        out += topics > 1 ? ", by app:</p>" : ":</p>"
        for sample in report.samples {
            out += "<figure class=\"sample\">"
            let alert = sample.alert
            if alert.title != nil || alert.body != nil {
                out += "<div class=\"bubble\">"
                if let title = alert.title { out += "<div class=\"sample-title\">\(HTMLText.escaped(title))</div>" }
                if let body = alert.body { out += "<div class=\"sample-body\">\(HTMLText.escaped(body))</div>" }
                out += "</div>"
            } else {
                out += "<p class=\"muted\">A notification without visible text (a background or silent update).</p>"
            }
            var caption = sample.topic.map { "For the app \($0) · " } ?? ""
            caption += ReportWording.plainLabel(sample.outcome) + " · from " + sample.source
            out += "<figcaption>\(HTMLText.escaped(caption))</figcaption>"
            // Line by line: the escaping shows a line break as `\n`, as on a terminal.
            let json = sample.readableJSON.split(separator: "\n", omittingEmptySubsequences: false)
                .map { HTMLText.escaped(String($0)) }.joined(separator: "\n")
            let hasText = alert.title != nil || alert.body != nil
            out += "<details\(hasText ? "" : " open")><summary>The notification's data (JSON)</summary>"
            out += "<pre class=\"payload\">\(json)</pre></details></figure>"
        }
        return out + "</section>\n"
    }
}
