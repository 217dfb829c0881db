import APNSCore
import Testing

@testable import APNSPipeline

/// The end-of-run lines on stderr: counts agree with their nouns and the reason breakdown reads the same every run.
@Suite("campaign summary text")
struct CampaignSummaryTextTests {
    @Test("one record, one retry, one request: singular nouns")
    func singular() {
        var summary = CampaignSummary()
        summary.add(.delivered)
        summary.records = 1
        summary.requests = 2
        summary.retries = 1
        summary.maximumInFlight = 1
        let text = summary.text(resultsPath: nil)
        #expect(text.contains("finished: 1 record in"), "\(text)")
        #expect(text.contains("(1 retry)"), "\(text)")
        #expect(text.contains("at most 1 request at once"), "\(text)")
    }

    @Test("reasons by count, then by name, whatever order they were counted in")
    func stableReasons() {
        let names = [
            "retryable/TooManyRequests", "prune/Unregistered", "prune/BadDeviceToken", "input_error/PayloadEmpty",
        ]
        var texts: Set<String> = []
        for rotation in 0..<names.count {
            var summary = CampaignSummary()
            summary.records = 7
            for name in names[rotation...] + names[..<rotation] {
                summary.reasons[name] = name == "prune/Unregistered" ? 4 : 1
            }
            texts.insert(summary.text(resultsPath: nil))
        }
        #expect(texts.count == 1)
        let lines =
            texts.first?.split(separator: "\n").filter { $0.hasPrefix("    ") }.map { String($0.dropFirst(4)) } ?? []
        #expect(
            lines == [
                "prune/Unregistered: 4", "input_error/PayloadEmpty: 1", "prune/BadDeviceToken: 1",
                "retryable/TooManyRequests: 1",
            ], "\(lines)")
    }
}
