import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

@Suite("Summary text on stderr")
struct SummaryTextTests {
    @Test("reasons and the stop reason are printed escaped: a server's text cannot forge lines or reach the terminal")
    func hostileReasons() {
        var summary = CampaignSummary()
        summary.ending = .stoppedEarly("APNs answered \u{1B}]0;pwned\u{07}\nforged: line")
        summary.outcomes[.inputError] = 3
        summary.reasons["input_error/Bad\r\n\u{9B}2J"] = 3
        let text = summary.text(resultsPath: "r\u{1B}.ndjson")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // stop reason, outcomes, one reason, requests, in flight, results: one line each, none forged
        #expect(lines.count == 6, "\(text.debugDescription)")
        #expect(lines[0] == "STOPPED EARLY: APNs answered \\u{1B}]0;pwned\\u{07}\\nforged: line")
        #expect(lines[2] == "    input_error/Bad\\r\\n\\u{9B}2J: 3")
        #expect(lines[5] == "  results: r\\u{1B}.ndjson")
        #expect(!text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) })
    }

    @Test("outcome counts: added one by one, set as a table, read back; outcomes that did not occur are absent")
    func outcomeCounts() {
        var summary = CampaignSummary()
        for (index, outcome) in RecordOutcome.allCases.enumerated() {
            for _ in 0..<(index * 3) { summary.add(outcome) }
        }
        for (index, outcome) in RecordOutcome.allCases.enumerated() { #expect(summary.count(outcome) == index * 3) }
        #expect(summary.outcomes[RecordOutcome.allCases[0]] == nil, "an outcome with no record is listed")
        #expect(summary.outcomes.count == RecordOutcome.allCases.count - 1)
        let table: [RecordOutcome: Int] = [.delivered: 5, .inDoubt: 2]
        summary.outcomes = table
        #expect(summary.outcomes == table)
        summary.add(.inDoubt)
        #expect(summary.count(.inDoubt) == 3 && summary.count(.prune) == 0)
    }

    @Test("a run ended by the deadline says so, with the records it expired, on stderr and in the JSON")
    func deadlinePassed() throws {
        var summary = CampaignSummary()
        summary.ending = .deadlinePassed("2026-12-02T18:00:00Z")
        summary.records = 5
        summary.outcomes = [.delivered: 2, .expired: 3]
        let text = summary.text(resultsPath: nil)
        #expect(
            text.hasPrefix(
                "DEADLINE PASSED (--not-after 2026-12-02T18:00:00Z): 3 records expired, never sent; do not retry\n"))
        #expect(text.contains("outcomes: delivered 2, expired 3"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(summary.json(connections: 1))) as? [String: Any])
        let ending = json["ending"] as? [String: String]
        #expect(ending == ["state": "deadline_passed", "not_after": "2026-12-02T18:00:00Z"])
        #expect((json["outcomes"] as? [String: Int])?["expired"] == 3)
    }
}
