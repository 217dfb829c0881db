import APNSCore
import Testing

@testable import APNSPipeline

/// What a refusal for a changed `send` input proposes (`RunStart+FixedRecords`), and the free result path it names.
@Suite("sending fixed records: the refusal's command")
struct FixedRecordsTests {
    static func identity(_ fingerprint: String, command: String = "send") -> CampaignIdentity {
        CampaignIdentity(command: command, inputs: [.init(path: "c.ndjson", fingerprint: fingerprint)], settings: [:])
    }

    static func refusal(
        now: CampaignIdentity, before: CampaignIdentity, arguments: [String], state: CampaignManifest.State = .finished
    ) -> String {
        var manifest = CampaignManifest(identity: before, arguments: arguments, startedAt: 1)
        manifest.state = state
        let facts = RunStart.Facts(
            manifest: manifest, resultsExist: true, resultsHoldLines: true, journalHoldsEntries: false,
            freeResultsPath: "out/r-2.ndjson")
        do {
            _ = try RunStart.decide(facts, resultsPath: "out/r.ndjson", identity: now, resume: false, overwrite: false)
            return "not refused"
        } catch {
            return error.detail
        }
    }

    @Test("a changed input: the command with a free --results and --skip-delivered, --resume and --overwrite left out")
    func changedInput() {
        let text = Self.refusal(
            now: Self.identity("b"), before: Self.identity("a"),
            arguments: ["send", "c.ndjson", "--results", "out/r.ndjson", "--resume", "--topic", "com.x y"])
        #expect(
            text.hasSuffix(
                "): apns-bulk send c.ndjson --results out/r-2.ndjson --topic 'com.x y' --skip-delivered out/r.ndjson"),
            "\(text)")
        #expect(text.contains("--overwrite sends every record again"))
        let equals = Self.refusal(
            now: Self.identity("b"), before: Self.identity("a"),
            arguments: ["send", "--results=out/r.ndjson", "c.ndjson"])
        #expect(
            equals.hasSuffix("apns-bulk send --results=out/r-2.ndjson c.ndjson --skip-delivered out/r.ndjson"),
            "\(equals)")
    }

    @Test(
        "another setting, a replay, or an unfinished campaign: no --skip-delivered command, and --overwrite still said to send everything"
    )
    func otherDifferences() {
        var priority = Self.identity("a")
        priority.settings["--priority"] = "5"
        let text = Self.refusal(
            now: priority, before: Self.identity("a"), arguments: ["send", "c.ndjson", "--results", "out/r.ndjson"])
        #expect(!text.contains("--skip-delivered") && text.contains("--overwrite sends every record again"), "\(text)")
        let replay = Self.refusal(
            now: Self.identity("b", command: "replay"), before: Self.identity("a", command: "replay"),
            arguments: ["replay", "c.ndjson", "--results", "out/r.ndjson"])
        #expect(!replay.contains("--skip-delivered"), "\(replay)")
        // An unfinished campaign: its records in flight have no line yet, so no --skip-delivered command.
        let unfinished = Self.refusal(
            now: Self.identity("b"), before: Self.identity("a"),
            arguments: ["send", "c.ndjson", "--results", "out/r.ndjson"],
            state: .unfinished)
        #expect(
            !unfinished.contains("--skip-delivered") && unfinished.contains("an unfinished campaign"), "\(unfinished)")
    }

    @Test("the free result path: -2, -3, … beside the old one, counting on from a -N it ends with")
    func freeResultsPath() {
        #expect(RunStart.freeResultsPath(besides: "out/r.ndjson") { _ in false } == "out/r-2.ndjson")
        #expect(RunStart.freeResultsPath(besides: "r.ndjson") { $0 == "r-2.ndjson" } == "r-3.ndjson")
        #expect(RunStart.freeResultsPath(besides: "a.b/r-2.csv") { _ in false } == "a.b/r-3.csv")
        #expect(RunStart.freeResultsPath(besides: "results") { _ in false } == "results-2")
        #expect(RunStart.freeResultsPath(besides: "-") { _ in false } == nil)
    }
}
