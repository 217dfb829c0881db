import Foundation
import Testing

/// The built executable against `apns-bulk mock`, over TLS on 127.0.0.1, on the sample campaigns.
@Suite("send end to end", .serialized)
struct SendEndToEndTests {
    /// What every line of samples/campaign.ndjson must end as (see samples/README.md).
    static let expectedNDJSON: [Int: String] = [
        1: "delivered", 2: "delivered", 3: "delivered", 4: "delivered", 5: "delivered", 6: "delivered",
        7: "delivered", 8: "prune", 9: "prune", 10: "prune", 11: "input_error", 12: "input_error",
        13: "input_error", 14: "duplicate", 15: "input_error", 16: "input_error", 17: "delivered",
    ]

    @Test("the sample NDJSON campaign: every line gets exactly its outcome")
    func sampleCampaign() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let results = out.file("results.ndjson")
        let run = try Tool.run(
            [
                "send", Tool.path("samples/campaign.ndjson"), "--results", results,
                "--summary", out.file("summary.json"),
            ] + mock.clientArguments)
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        let lines = try Results.read(results)
        #expect(lines.count == 17, "one line per record")
        #expect(Results.outcomes(lines) == Self.expectedNDJSON)
        let byLine = Dictionary(lines.map { ($0["line"] as? Int ?? 0, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byLine[8]?["reason"] as? String == "Unregistered")
        #expect((byLine[8]?["timestamp"] as? Int ?? 0) > 1_600_000_000_000)
        #expect(byLine[9]?["reason"] as? String == "BadDeviceToken")
        #expect(byLine[10]?["reason"] as? String == "DeviceTokenNotForTopic")
        #expect(byLine[11]?["reason"] as? String == "RecordInvalidJson")
        #expect(byLine[12]?["reason"] as? String == "TokenOddLength")
        #expect(byLine[7]?["apns_id"] as? String == "6d1b6a1e-2f3c-4b5d-9e8f-0a1b2c3d4e5f", "our apns-id comes back")
        #expect(byLine[1]?["status"] as? Int == 200)
        let counters = try mock.stop()
        let byStatus = counters["by_status"] as? [String: Int] ?? [:]
        #expect(byStatus["200"] == 8, "\(counters)")
        #expect(counters["requests"] as? Int == 11, "invalid records and duplicates are never sent")
        let summary =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out.file("summary.json"))))
            as? [String: Any]
        #expect((summary?["outcomes"] as? [String: Int])?["delivered"] == 8)
    }

    @Test("the CSV campaign with a template")
    func csvCampaign() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let results = out.file("results.ndjson")
        let run = try Tool.run(
            [
                "send", Tool.path("samples/campaign.csv"), "--template", Tool.path("samples/template.json"),
                "--results", results,
            ] + mock.clientArguments)
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        let outcomes = Results.outcomes(try Results.read(results))
        // Header on line 1; "Chloé\nde la Tour" spans lines 4-5, so later records start one line lower. Line 7's
        // points cell is empty where the template has {{points}} outside quotes: TemplateValueInvalid.
        #expect(
            outcomes == [
                2: "delivered", 3: "delivered", 4: "delivered", 6: "prune", 7: "input_error",
                8: "input_error", 9: "input_error", 10: "duplicate", 11: "delivered",
            ])
        _ = try mock.stop()
    }

    @Test("prune lists exactly the dead and bad tokens, deduplicated")
    func prune() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let results = out.file("results.ndjson")
        _ = try Tool.run(["send", Tool.path("samples/campaign.ndjson"), "--results", results] + mock.clientArguments)
        _ = try mock.stop()
        let list = try Tool.run(["prune", results, results])
        #expect(list.status == 0, "\(list.stderr)")
        let tokens = list.stdout.split(separator: "\n").map(String.init)
        #expect(tokens.count == 3)
        #expect(tokens.filter { $0.hasSuffix("dead") }.count == 1)
        #expect(tokens.filter { $0.hasSuffix("0bad") }.count == 1)
        #expect(tokens.filter { $0.hasSuffix("f0f0") }.count == 1)
    }

    @Test("a mock that rejects the key stops the campaign early; the rest is not sent")
    func stopsEarlyOnWrongKey() throws {
        let other = try TemporaryDirectory()
        let otherKey = other.file("other.pem")
        try Self.shell("openssl ecparam -name prime256v1 -genkey -noout | openssl pkey -pubout -out '\(otherKey)'")
        let mock = try MockProcess(publicKey: otherKey)
        let out = try TemporaryDirectory()
        let campaign = out.file("big.ndjson")
        try Self.shell("python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 2000 --out '\(campaign)'")
        let results = out.file("results.ndjson")
        let run = try Tool.run(["send", campaign, "--results", results] + mock.clientArguments)
        #expect(run.status == 4, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("InvalidProviderToken"))
        let lines = try Results.read(results)
        #expect(lines.count == 2000, "every record still gets its line")
        let counters = try mock.stop()
        #expect((counters["requests"] as? Int ?? 0) <= 10, "the broken key burnt \(counters["requests"] ?? 0) requests")
        #expect(lines.filter { $0["outcome"] as? String == "not_sent" }.count >= 1990)
    }

    @Test("shards 0..3 of 4 cover every record exactly once")
    func shards() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        let campaign = out.file("c.ndjson")
        try Self.shell("python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 1000 --out '\(campaign)'")
        var seen: [Int: Int] = [:]
        for shard in 0..<4 {
            let results = out.file("r\(shard).ndjson")
            let run = try Tool.run(
                ["send", campaign, "--shard", "\(shard)/4", "--results", results] + mock.clientArguments)
            #expect(run.status == 0, "shard \(shard): exit \(run.status): \(run.stderr)")
            let lines = try Results.read(results)
            #expect(lines.count > 150, "shard \(shard) has \(lines.count) records: unbalanced")
            for line in lines { seen[line["line"] as? Int ?? 0, default: 0] += 1 }
        }
        #expect(seen.count == 1000)
        #expect(seen.values.allSatisfy { $0 == 1 })
        let counters = try mock.stop()
        #expect(counters["requests"] as? Int == 1000)
    }

    static func shell(_ command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw MockStartError(log: "command failed: \(command)") }
    }
}
