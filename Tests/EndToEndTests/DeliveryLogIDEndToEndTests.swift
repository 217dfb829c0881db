import Foundation
import Testing

/// `send` against `apns-bulk mock --development --log-accepted`: every delivered result line keeps the
/// `apns-unique-id` the mock answered, as `apns_unique_id`, in NDJSON and CSV; `report` shows one and links
/// nowhere (docs/FILES.md, "Result files").
@Suite("delivery-log ids end to end", .serialized)
struct DeliveryLogIDEndToEndTests {
    static func token(_ number: Int) -> String { String(repeating: "5e", count: 28) + String(format: "%08x", number) }

    @Test(
        "every delivered line has the apns_unique_id the mock sent with its 200, in NDJSON and CSV; report shows it without links"
    )
    func uniqueIDsKept() throws {
        let directory = try TemporaryDirectory()
        let campaign = directory.file("campaign.ndjson")
        let lines = (1...8).map { #"{"token":"\#(Self.token($0))","payload":{"aps":{"alert":"hi"}}}"# }
        try (lines.joined(separator: "\n") + "\n").write(toFile: campaign, atomically: true, encoding: .utf8)
        let registry = directory.file("registry.txt")
        try "unregistered \(Self.token(8)) 1767225600123\n".write(toFile: registry, atomically: true, encoding: .utf8)

        for format in ["ndjson", "csv"] {
            let accepted = directory.file("accepted-\(format).ndjson")
            let mock = try MockProcess(["--development", "--log-accepted", accepted, "--registry", registry])
            let results = directory.file("results.\(format)")
            let sent = try Tool.run(
                ["send", campaign, "--results", results, "--results-format", format] + mock.clientArguments)
            #expect(sent.status == 0, "exit \(sent.status): \(sent.stderr)")
            _ = try mock.stop()
            var sentIDs: [String: String] = [:]
            for line in try Results.read(accepted) {
                if let token = line["token"] as? String, let id = line["apns_unique_id"] as? String {
                    sentIDs[token] = id
                }
            }
            #expect(sentIDs.count == 7, "\(format): the mock logged a unique id for each 200")
            #expect(Set(sentIDs.values).count == 7)

            var kept: [String: String] = [:]
            var outcomes: [String: String] = [:]
            if format == "ndjson" {
                for line in try Results.read(results) {
                    let token = line["token"] as? String ?? ""
                    outcomes[token] = line["outcome"] as? String
                    if let id = line["apns_unique_id"] as? String { kept[token] = id }
                }
            } else {
                let rows = try String(contentsOfFile: results, encoding: .utf8).split(separator: "\n").map {
                    $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                }
                let header = try #require(rows.first)
                let tokenColumn = try #require(header.firstIndex(of: "token"))
                let idColumn = try #require(header.firstIndex(of: "apns_unique_id"), "CSV header: \(header)")
                let outcomeColumn = try #require(header.firstIndex(of: "outcome"))
                for row in rows.dropFirst() where row.count == header.count {
                    outcomes[row[tokenColumn]] = row[outcomeColumn]
                    if !row[idColumn].isEmpty { kept[row[tokenColumn]] = row[idColumn] }
                }
            }
            #expect(outcomes.count == 8, "\(format)")
            #expect(outcomes[Self.token(8)] == "prune", "\(format)")
            #expect(kept == sentIDs, "\(format): result lines keep exactly the ids the mock answered")
            #expect(outcomes.filter { $0.value == "delivered" }.keys.allSatisfy { kept[$0] != nil }, "\(format)")

            let html = directory.file("report-\(format).html")
            let report = try Tool.run(["report", results, "--html", html])
            #expect(report.status == 0, "exit \(report.status): \(report.stderr)")
            let page = try String(contentsOfFile: html, encoding: .utf8)
            #expect(page.contains("7 delivered records carry an apns_unique_id"), "\(format)")
            #expect(sentIDs.values.contains { page.contains("<code id=\"first-unique-id\">\($0)</code>") }, "\(format)")
            #expect(!page.contains("href=\"http") && !page.contains("apple.com"), "\(format): the report links nowhere")
        }
    }
}
