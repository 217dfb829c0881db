import Foundation
import Testing

/// CSV as spreadsheet programs export it, sent to the mock and checked with `validate` (docs/FILES.md, "CSV and
/// payload templates").
///
/// No spreadsheet program runs here (LibreOffice is not installed on the build machines), so the files are
/// written by hand, byte for byte as the programs write them: Excel's "CSV UTF-8" where the list separator is `;`
/// (most of Europe): a UTF-8 BOM, `;` between fields, CRLF line ends, quotes only around a field that holds `;`, a
/// quote or a line end, and an empty cell as nothing between two `;`. LibreOffice's "Text CSV" with tab as the
/// field delimiter (and Google Sheets' `.tsv`): no BOM, tabs, LF line ends.
@Suite("spreadsheet CSV end to end", .serialized)
struct SpreadsheetCSVEndToEndTests {
    static let template = #"{"aps":{"alert":"Hi {{first_name}} from {{city}}","badge":{{badge}}}}"#

    /// Test tokens the mock accepts (none ends in dead, 0bad or f0f0).
    static func token(_ index: Int) -> String {
        String(repeating: "ab", count: 31) + String(format: "%02x", index)
    }

    /// A file in `directory` holding exactly `bytes`.
    static func write(_ text: String, _ name: String, in directory: TemporaryDirectory, bom: Bool = false) throws
        -> String
    {
        let path = directory.file(name)
        try Data((bom ? [0xEF, 0xBB, 0xBF] : []) + Array(text.utf8)).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func outcomes(_ results: String) throws -> [Int: String] {
        Results.outcomes(try Results.read(results))
    }

    @Test("a semicolon CSV as Excel writes it (BOM, CRLF, a quoted field with ';' in it): every row delivered")
    func semicolonFromExcel() throws {
        let directory = try TemporaryDirectory()
        let template = try Self.write(Self.template, "template.json", in: directory)
        let rows = [
            "token;first_name;city;badge", "\(Self.token(1));Ana;Lisboa;1",
            "\(Self.token(2));\"Li; Bo\";\"Taipei; Taiwan\";2",
            "\(Self.token(3));\"Dmitri \"\"Dima\"\"\";Riga;3",
        ]
        let campaign = try Self.write(rows.joined(separator: "\r\n") + "\r\n", "campaign.csv", in: directory, bom: true)
        let mock = try MockProcess()
        let results = directory.file("results.ndjson")
        let run = try Tool.run(["send", campaign, "--template", template, "--results", results] + mock.clientArguments)
        _ = try mock.stop()
        #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
        #expect(try Self.outcomes(results) == [2: "delivered", 3: "delivered", 4: "delivered"])
        let check = try Tool.run(["validate", campaign, "--template", template, "--topic", MockProcess.topic])
        #expect(check.status == 0, "exit \(check.status): \(check.stderr)")
        #expect(check.stderr.contains("3 records: 3 valid, 0 invalid"), "\(check.stderr)")
    }

    @Test("the sample semicolon campaign and the sample template: every row delivered")
    func semicolonSample() throws {
        let mock = try MockProcess()
        let directory = try TemporaryDirectory()
        let results = directory.file("results.ndjson")
        let run = try Tool.run(
            [
                "send", Tool.path("samples/campaign-semicolon.csv"), "--template",
                Tool.path("samples/template.json"), "--results", results,
            ] + mock.clientArguments)
        _ = try mock.stop()
        #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
        #expect(try Self.outcomes(results) == [2: "delivered", 3: "delivered", 4: "delivered", 5: "delivered"])
    }

    @Test(
        "tab-separated, as LibreOffice (.csv) and Google Sheets (.tsv) write it: every row delivered",
        arguments: ["csv", "tsv"])
    func tabSeparated(suffix: String) throws {
        let directory = try TemporaryDirectory()
        let template = try Self.write(Self.template, "template.json", in: directory)
        let rows = [
            "first_name\tcity\ttoken\tbadge", "Ana\tLisboa, PT\t\(Self.token(1))\t1",
            "\"Bo\tLi\"\tOslo\t\(Self.token(2))\t0",
        ]
        let campaign = try Self.write(rows.joined(separator: "\n") + "\n", "campaign.\(suffix)", in: directory)
        let mock = try MockProcess()
        let results = directory.file("results.ndjson")
        let run = try Tool.run(["send", campaign, "--template", template, "--results", results] + mock.clientArguments)
        _ = try mock.stop()
        #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
        #expect(try Self.outcomes(results) == [2: "delivered", 3: "delivered"])
    }

    @Test("--csv-delimiter: a wrong one says which the header holds; a bad value is a usage error naming the option")
    func givenDelimiter() throws {
        let directory = try TemporaryDirectory()
        let template = try Self.write(Self.template, "template.json", in: directory)
        let campaign = try Self.write(
            "token;first_name;city;badge\r\n\(Self.token(1));Ana;Riga;1\r\n", "c.csv", in: directory, bom: true)
        let base = ["validate", campaign, "--template", template, "--topic", MockProcess.topic]
        let right = try Tool.run(base + ["--csv-delimiter", ";"])
        #expect(right.status == 0, "exit \(right.status): \(right.stderr)")
        let wrong = try Tool.run(base + ["--csv-delimiter", ","])
        #expect(wrong.status == 1, "exit \(wrong.status): \(wrong.stderr)")
        #expect(wrong.stderr.contains("give --csv-delimiter ';'"), "\(wrong.stderr)")
        let bad = try Tool.run(base + ["--csv-delimiter", "|"])
        #expect(bad.status == 64, "exit \(bad.status): \(bad.stderr)")
        #expect(bad.stderr.contains("--csv-delimiter must be ',', ';' or tab"), "\(bad.stderr)")
    }

    @Test(
        "--csv-delimiter, when given, is part of the campaign: the same run again sends nothing, one without it is refused"
    )
    func delimiterInTheIdentity() throws {
        let directory = try TemporaryDirectory()
        let template = try Self.write(Self.template, "template.json", in: directory)
        let campaign = try Self.write(
            "token;first_name;city;badge\r\n\(Self.token(1));Ana;Riga;1\r\n", "c.csv", in: directory, bom: true)
        let mock = try MockProcess()
        let results = directory.file("results.ndjson")
        let send = ["send", campaign, "--template", template, "--results", results]
        let first = try Tool.run(send + ["--csv-delimiter", ";"] + mock.clientArguments)
        #expect(first.status == 0, "exit \(first.status): \(first.stderr)")
        let again = try Tool.run(send + ["--csv-delimiter", ";"] + mock.clientArguments)
        #expect(again.status == 0, "exit \(again.status): \(again.stderr)")
        let other = try Tool.run(send + mock.clientArguments)
        let counters = try mock.stop()
        #expect(other.status == 64, "exit \(other.status): \(other.stderr)")
        #expect(other.stderr.contains("--csv-delimiter"), "\(other.stderr)")
        #expect(counters["requests"] as? Int == 1, "sent once")
    }

    @Test("a device_token header: the error names the column and --token-column; with it, every row delivered")
    func deviceTokenHeader() throws {
        let directory = try TemporaryDirectory()
        let template = try Self.write(Self.template, "template.json", in: directory)
        let campaign = try Self.write(
            "device_token;first_name;city;badge\r\n\(Self.token(1));Ana;Riga;1\r\n", "c.csv",
            in: directory, bom: true)
        let mock = try MockProcess()
        let results = directory.file("results.ndjson")
        let refused = try Tool.run(
            ["send", campaign, "--template", template, "--results", results] + mock.clientArguments)
        #expect(refused.status == 1, "exit \(refused.status): \(refused.stderr)")
        let line =
            refused.stderr.split(separator: "\n").first { $0.hasPrefix("apns-bulk: error:") }.map(String.init) ?? ""
        #expect(line.contains("c.csv: no 'token' column"), "\(refused.stderr)")
        #expect(line.contains("'device_token' looks like it: give --token-column device_token"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: results), "a refused campaign leaves no result file")
        let run = try Tool.run(
            ["send", campaign, "--template", template, "--results", results, "--token-column", "device_token"]
                + mock.clientArguments)
        _ = try mock.stop()
        #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
        #expect(try Self.outcomes(results) == [2: "delivered"])
    }

    @Test(
        "CSV piped on standard input without --input-format: line 1's input_error says --input-format csv; with it, delivered"
    )
    func csvOnStandardInput() throws {
        let directory = try TemporaryDirectory()
        let template = try Self.write(Self.template, "template.json", in: directory)
        let campaign = try Self.write(
            "token;first_name;city;badge\r\n\(Self.token(1));Ana;Riga;1\r\n", "c.csv", in: directory, bom: true)
        let mock = try MockProcess()
        func piped(_ extra: [String], results: String) throws -> Tool.Result {
            let command =
                (["'\(Tool.binary)'", "send", "-", "--template", "'\(template)'", "--results", "'\(results)'"]
                + (mock.clientArguments + extra).map { "'\($0)'" }).joined(separator: " ")
            return try Tool.run(["-c", "cat '\(campaign)' | \(command)"], program: "/bin/sh")
        }
        let results = directory.file("results.ndjson")
        let asNDJSON = try piped([], results: results)
        #expect(asNDJSON.status == 2, "exit \(asNDJSON.status): \(asNDJSON.stderr)")
        let lines = try Results.read(results)
        #expect(lines.count == 2, "every line gets its result line")
        let first = lines.first { $0["line"] as? Int == 1 } ?? [:]
        #expect(first["outcome"] as? String == "input_error")
        #expect(first["reason"] as? String == "RecordInvalidJson")
        #expect((first["detail"] as? String)?.contains("give --input-format csv") == true, "\(first)")
        let csvResults = directory.file("csv-results.ndjson")
        let asCSV = try piped(["--input-format", "csv"], results: csvResults)
        _ = try mock.stop()
        #expect(asCSV.status == 0, "exit \(asCSV.status): \(asCSV.stderr)")
        #expect(try Self.outcomes(csvResults) == [2: "delivered"])
    }

    @Test(
        "an empty badge cell: that row's input_error names the column, the others are delivered; validate says the same"
    )
    func emptyBadgeCell() throws {
        let directory = try TemporaryDirectory()
        let template = try Self.write(Self.template, "template.json", in: directory)
        let rows = [
            "token;first_name;city;badge", "\(Self.token(1));Ana;Riga;1", "\(Self.token(2));Bo;Oslo;",
            "\(Self.token(3));Cy;Rome;zwei", "\(Self.token(4));Di;Bern;4",
        ]
        let campaign = try Self.write(rows.joined(separator: "\r\n") + "\r\n", "c.csv", in: directory, bom: true)
        let mock = try MockProcess()
        let results = directory.file("results.ndjson")
        let run = try Tool.run(["send", campaign, "--template", template, "--results", results] + mock.clientArguments)
        let counters = try mock.stop()
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        let lines = try Results.read(results)
        #expect(Results.outcomes(lines) == [2: "delivered", 3: "input_error", 4: "input_error", 5: "delivered"])
        #expect(counters["requests"] as? Int == 2, "the bad rows are never sent")
        let empty = lines.first { $0["line"] as? Int == 3 } ?? [:]
        #expect(empty["reason"] as? String == "TemplateValueInvalid")
        #expect(
            (empty["detail"] as? String)?.hasPrefix("empty value in column 'badge' where the template needs a number")
                == true,
            "\(empty)")
        let text = lines.first { $0["line"] as? Int == 4 } ?? [:]
        #expect(
            (text["detail"] as? String)?.hasPrefix("value 'zwei' in column 'badge' is not a number") == true, "\(text)")
        let check = try Tool.run(["validate", campaign, "--template", template, "--topic", MockProcess.topic])
        #expect(check.status == 2, "exit \(check.status): \(check.stderr)")
        #expect(
            check.stdout.contains("c.csv:3: TemplateValueInvalid: empty value in column 'badge'"), "\(check.stdout)")
        #expect(
            check.stdout.contains("c.csv:4: TemplateValueInvalid: value 'zwei' in column 'badge'"), "\(check.stdout)")
    }
}
