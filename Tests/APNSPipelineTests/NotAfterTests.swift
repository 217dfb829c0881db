import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// `--not-after` read (an ISO-8601 time or a duration after the first start) and the deadline in the campaign
/// record (absent in older records).
@Suite("--not-after: reading it, and the campaign record's deadline")
struct NotAfterTests {
    @Test("an ISO-8601 time with its zone, an offset, fractional seconds; a duration; nothing else")
    func parsing() throws {
        #expect(NotAfter(parsing: "2026-12-02T18:00:00Z") == .instant(1_796_234_400))
        #expect(NotAfter(parsing: "2026-12-02T19:00:00+01:00") == .instant(1_796_234_400))
        #expect(NotAfter(parsing: "2026-12-02T18:00:00.500Z") == .instant(1_796_234_400.5))
        #expect(NotAfter(parsing: "6h") == .afterFirstStart(try #require(DurationText(seconds: 21_600))))
        #expect(NotAfter(parsing: "1h30m")?.deadline(firstStart: 1000) == 6400)
        for bad in ["", "6", "0s", "2026-12-02", "2026-12-02T18:00:00", "tomorrow", "6h later"] {
            #expect(NotAfter(parsing: bad) == nil, "\(bad) was read")
        }
    }

    @Test("a duration counts from the first start, an instant from nothing; the text is UTC to the second")
    func resolving() {
        #expect(NotAfter.afterFirstStart(DurationText(parsing: "2s")!).deadline(firstStart: 100.25) == 102.25)
        #expect(NotAfter.instant(50).deadline(firstStart: 100) == 50)
        #expect(NotAfter.text(1_796_234_400.9) == "2026-12-02T18:00:00Z")
    }

    @Test("the campaign record keeps the deadline; one written before the field existed reads without it")
    func manifestField() throws {
        let identity = CampaignIdentity(
            command: "send", inputs: [.init(path: "c.ndjson", fingerprint: "c")], settings: [:])
        var manifest = CampaignManifest(identity: identity, arguments: ["send"], startedAt: 1)
        manifest.notAfter = 1_796_234_400
        let data = try JSONEncoder().encode(manifest)
        #expect(try JSONDecoder().decode(CampaignManifest.self, from: data).notAfter == 1_796_234_400)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["notAfter"] = nil
        let older = try JSONSerialization.data(withJSONObject: object)
        #expect(try JSONDecoder().decode(CampaignManifest.self, from: older).notAfter == nil)
    }
}
