import APNSPipeline
import ArgumentParser
import Testing

@testable import APNSBulkCLI

/// The value lists the shell completions offer that are written out in the CLI rather than taken from an enum's
/// cases (`ValueCompletion`): each value is one its option accepts.
@Suite("completion values are accepted by their options")
struct CompletionValuesTests {
    @Test("every --progress value offered is accepted", arguments: OutputOptions.progressModes)
    func progressMode(mode: String) throws {
        let options = try OutputOptions.parse(["--results", "r.ndjson", "--progress", mode])
        #expect(options.progress == mode)
    }

    @Test("a --progress value not offered is refused")
    func unknownProgressMode() {
        #expect(throws: (any Error).self) { try OutputOptions.parse(["--results", "r.ndjson", "--progress", "fancy"]) }
    }

    @Test("every --endpoint name offered is accepted", arguments: ConnectionOptions.endpointNames)
    func endpointName(name: String) throws {
        let options = try ConnectionOptions.parse(["--endpoint", name])
        #expect(options.endpoint == name)
    }

    @Test("--input-format sets every input's format, whatever its name; by name without it; other values refused")
    func inputFormat() throws {
        let paths = ["-", "/dev/fd/63", "users.csv", "c.ndjson.gz"]
        let csv = try CampaignOptions.parse(["--input-format", "csv"])
        #expect(csv.inputs(paths).map(\.format) == [.csv, .csv, .csv, .csv])
        let byName = try CampaignOptions.parse([])
        #expect(byName.inputs(paths).map(\.format) == [.ndjson, .ndjson, .csv, .ndjson])
        #expect(throws: (any Error).self) { try CampaignOptions.parse(["--input-format", "tsv"]) }
    }
}
