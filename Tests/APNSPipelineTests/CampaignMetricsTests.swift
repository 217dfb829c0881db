import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// The metrics text: every family typed and described, counters named `_total`, latency a summary with its sum and
/// count, every sample labelled with the campaign and shard (escaped), and the last-success timestamp kept.
@Suite("Campaign metrics")
struct CampaignMetricsTests {
    func summary() -> CampaignSummary {
        var summary = CampaignSummary()
        summary.add(.delivered)
        summary.add(.prune)
        summary.requests = 3
        summary.retries = 1
        summary.latencies.record(0.010)
        summary.latencies.record(0.030)
        return summary
    }

    @Test("families, types, labels and values")
    func text() {
        let text = CampaignMetrics(campaign: #"spring "sale"\2026"#, shard: "1/2").text(
            summary(), now: 1_800_000_000, lastSuccess: 1_799_999_000)
        let labels = #"campaign="spring \"sale\"\\2026",shard="1/2""#
        #expect(text.contains("apns_bulk_records_total{\(labels),outcome=\"delivered\"} 1\n"))
        #expect(text.contains("apns_bulk_requests_total{\(labels)} 3\n"))
        #expect(text.contains("apns_bulk_request_latency_seconds_count{\(labels)} 2\n"))
        #expect(text.contains("apns_bulk_request_latency_seconds_sum{\(labels)} 0.04"))
        #expect(text.contains("apns_bulk_last_run_end_timestamp_seconds{\(labels)} 1800000000\n"))
        #expect(text.contains("apns_bulk_last_success_timestamp_seconds{\(labels)} 1799999000\n"))
        var types: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            types[String(parts[2])] = String(parts[3])
        }
        for (name, type) in types {
            #expect(name.hasSuffix("_total") == (type == "counter"), "\(name) is a \(type)")
            #expect(text.contains("# HELP \(name) "), "\(name) has no HELP")
        }
        #expect(types["apns_bulk_request_latency_seconds"] == "summary")
        let withoutSuccess = CampaignMetrics(campaign: "c", shard: "all").text(summary(), now: 1, lastSuccess: nil)
        #expect(!withoutSuccess.contains("last_success"))
    }

    @Test("the file is replaced whole, readable by others; an earlier last success is read back")
    func file() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("c.prom").path
        let metrics = CampaignMetrics(campaign: "c", shard: "all")
        try CampaignMetrics.write(metrics.text(summary(), now: 5, lastSuccess: 4), to: path)
        #expect(CampaignMetrics.lastSuccess(atPath: path) == 4)
        try CampaignMetrics.write(metrics.text(summary(), now: 9, lastSuccess: nil), to: path)
        #expect(CampaignMetrics.lastSuccess(atPath: path) == nil)
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
        let mask = umask(0)
        umask(mask)
        #expect(mode == 0o666 & ~Int(mask), "\(String(mode, radix: 8))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["c.prom"])
        #expect(CampaignMetrics.campaign(forResults: "/data/spring-sale-3.ndjson") == "spring-sale-3")
    }
}
