import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

@Suite("Campaign timeline: samples at progress reports, in the summary JSON")
struct CampaignTimelineTests {
    private func summary(elapsed: Double, delivered: Int, latencies: [Double], into summary: inout CampaignSummary) {
        summary.elapsedSeconds = elapsed
        summary.records = delivered
        summary.requests = delivered
        summary.outcomes[.delivered] = delivered
        for latency in latencies { summary.latencies.record(latency) }
    }

    @Test("each sample has the cumulative counts and the latency of its own interval only")
    func intervalLatency() {
        var timeline = CampaignTimeline(startedAt: 1_000)
        var run = CampaignSummary()
        summary(elapsed: 1, delivered: 100, latencies: Array(repeating: 0.010, count: 100), into: &run)
        timeline.record(run, inFlight: 20)
        summary(elapsed: 2, delivered: 200, latencies: Array(repeating: 0.200, count: 100), into: &run)
        timeline.record(run, inFlight: 30, window: 64)
        summary(elapsed: 3, delivered: 200, latencies: [], into: &run)
        timeline.record(run, inFlight: 0)
        let samples = timeline.samples
        #expect(samples.map(\.answered) == [100, 200, 200])
        #expect(samples.map(\.inFlight) == [20, 30, 0])
        #expect(samples.map(\.window) == [nil, 64, nil])
        let first = samples[0].latencyP99 ?? 0
        let second = samples[1].latencyP50 ?? 0
        #expect(abs(first - 0.010) < 0.001, "the first interval saw only 10 ms answers: \(first)")
        #expect(abs(second - 0.200) < 0.01, "the second interval only 200 ms ones, not the run's mix: \(second)")
        #expect(samples[2].latencyP50 == nil, "no answers, no latency")
    }

    @Test("a long run keeps a bounded number of samples, ending with the last")
    func thinning() {
        var timeline = CampaignTimeline(startedAt: 0, maximumSamples: 10)
        var run = CampaignSummary()
        for second in 1...101 {
            summary(elapsed: Double(second), delivered: second * 10, latencies: [0.001 * Double(second)], into: &run)
            timeline.record(run, inFlight: second)
        }
        #expect(timeline.samples.count <= 10)
        #expect(timeline.samples.count >= 5)
        #expect(timeline.samples.last?.answered == 1010)
        #expect(timeline.samples.map(\.elapsedSeconds) == timeline.samples.map(\.elapsedSeconds).sorted())
        #expect((timeline.samples.last?.latencyP99 ?? 0) >= 0.1, "merged samples keep the larger p99")
    }

    @Test("the timeline goes into the summary JSON under one key and reads back the same")
    func summaryJSON() throws {
        var timeline = CampaignTimeline(startedAt: 1_790_000_000.5)
        var run = CampaignSummary()
        summary(elapsed: 1, delivered: 7, latencies: [0.004], into: &run)
        timeline.record(run, inFlight: 3, window: 10)
        let bytes = timeline.inserted(intoSummaryJSON: run.json(connections: 2))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["records"] as? Int == 7, "the summary's own keys stay")
        #expect(object["connections"] as? Int == 2)
        let value = try #require(object["timeline"])
        let back = try #require(CampaignTimeline(jsonObject: value))
        #expect(back.startedAt == 1_790_000_000.5)
        #expect(back.samples == timeline.samples)
    }
}
