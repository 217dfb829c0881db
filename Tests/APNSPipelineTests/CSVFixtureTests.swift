import APNSCore
import Testing

@testable import APNSPipeline

@Suite("CSV fixture campaign")
struct CSVFixtureTests {
    typealias Support = PipelineTestSupport

    @Test("the fixture CSV and its pretty-printed template read as documented in the README")
    func fixture() throws {
        var options = CampaignReaderOptions(defaults: Support.defaults)
        options.template = try PayloadTemplate(
            contentsOfFile: Support.fixtures.appendingPathComponent("template.json").path)
        let path = Support.fixtures.appendingPathComponent("campaign.csv").path
        let records = try Support.readAll([CampaignInput(path: path)], options: options)
        #expect(records.map(\.key.line) == [2, 3, 5, 6, 7])
        #expect(records.map(\.code) == [nil, nil, .tokenNotHex, .templateValueInvalid, .csvColumnCount])
        let bob = try #require(records[1].notification)
        #expect(
            String(decoding: bob.payload, as: UTF8.self)
                == #"{"aps":{"alert":{"title":"Hello Bob \"the builder\"\nSmith","body":"You have 12 new messages"},"badge":12}}"#
        )
        #expect(bob.collapseID?.value == "promo")
        // An empty badge cell where the template has {{badge}} outside quotes is the record's input error, naming
        // the column (it once went in as "badge":"", a string where APNs wants a number).
        #expect(
            records[3].error?.detail.hasPrefix("empty value in column 'badge' where the template needs a number")
                == true)
    }
}
