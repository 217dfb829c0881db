import ArgumentParser
import Foundation
import Testing

@testable import APNSBulkCLI

/// The CLI's table (Testing has an `ExitStatus` of its own).
typealias Status = APNSBulkCLI.ExitStatus

/// Every command's `--help` EXIT STATUS section, and the README's exit-status table, against `ExitStatus`, the one
/// table in code; and every help line at 80 columns.
@Suite("exit statuses: help, README and the table agree")
struct ExitStatusHelpTests {
    /// Each subcommand with the entries its help must list.
    static var commands: [(name: String, type: any ParsableCommand.Type, entries: [Status.Entry])] {
        [
            ("send", SendCommand.self, Status.campaignEntries),
            ("replay", ReplayCommand.self, Status.campaignEntries),
            ("validate", ValidateCommand.self, Status.validateEntries),
            ("prune", PruneCommand.self, Status.pruneEntries),
            ("report", ReportCommand.self, Status.reportEntries),
            ("token", TokenCommand.self, Status.tokenEntries),
            ("pin", PinCommand.self, Status.pinEntries),
            ("mock", MockCommand.self, Status.mockEntries),
        ]
    }

    @Test("every subcommand is listed here", arguments: APNSBulkCommand.configuration.subcommands.map { "\($0)" })
    func everySubcommandIsChecked(subcommand: String) {
        #expect(Self.commands.contains { "\($0.type)" == subcommand }, "\(subcommand) has no exit-status entries")
    }

    @Test("--help lists exactly the command's entries of the table", arguments: Self.commands.map(\.name))
    func helpMatchesTable(name: String) throws {
        let command = try #require(Self.commands.first { $0.name == name })
        let help = APNSBulkCommand.helpMessage(for: command.type, columns: 80)
        let section = try #require(HelpText.section("EXIT STATUS", in: help), "no EXIT STATUS in \(name) --help")
        let listed = HelpText.entries(section)
        #expect(listed.map(\.code) == command.entries.map(\.status.rawValue), "\(name): \(section)")
        #expect(listed.map(\.text) == command.entries.map(\.text), "\(name): \(section)")
    }

    @Test("send and replay list every status, with the campaign's own texts")
    func campaignCommandsListEveryStatus() {
        #expect(Status.campaignEntries.map(\.status) == Status.allCases)
    }

    @Test(
        "EXIT STATUS lines fit 80 columns; a long text wraps under its text, not at the margin",
        arguments: Self.commands.map(\.name))
    func exitStatusLinesWrapWithHangingIndent(name: String) throws {
        let command = try #require(Self.commands.first { $0.name == name })
        let help = APNSBulkCommand.helpMessage(for: command.type, columns: 80)
        let section = try #require(HelpText.section("EXIT STATUS", in: help))
        for line in section.split(separator: "\n").dropFirst() {
            #expect(line.count <= 80, "\(name): \(line)")
            let isEntry = line.range(of: #"^ {1,2}\d{1,2}  \S"#, options: .regularExpression) != nil
            let isContinuation = line.hasPrefix("     ") && !line.hasPrefix("      ")
            #expect(isEntry || isContinuation, "\(name): line neither an entry nor indented under one: '\(line)'")
        }
    }

    @Test("every line of every --help fits 80 columns", arguments: Self.commands.map(\.name) + ["apns-bulk"])
    func helpFits80Columns(name: String) {
        let type = Self.commands.first { $0.name == name }?.type ?? APNSBulkCommand.self
        let help = APNSBulkCommand.helpMessage(for: type, columns: 80)
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            #expect(line.count <= 80, "\(name): \(line.count) columns: \(line)")
        }
    }

    @Test("a long entry wraps at the width with a hanging indent, words kept whole")
    func helpSectionWraps() {
        let text = "one two three four five six seven eight nine ten eleven twelve"
        let section = Status.helpSection([Status.Entry(.failure, text)], width: 30)
        #expect(
            section == """
                EXIT STATUS
                  1  one two three four five
                     six seven eight nine ten
                     eleven twelve
                """)
    }

    @Test("the README's exit-status table is the table's codes and meanings")
    func readmeMatchesTable() throws {
        let readme = try String(contentsOf: HelpText.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(
            HelpText.markdownSection("## Exit statuses", in: readme), "README has no ## Exit statuses")
        #expect(
            section.contains(Status.markdownTable),
            "the README's table is not ExitStatus.markdownTable:\n\(Status.markdownTable)")
        let rows = HelpText.markdownRows(section)
        #expect(rows.map(\.code) == Status.allCases.map(\.rawValue), "\(rows)")
        #expect(
            rows.map(\.text) == Status.allCases.map { $0.meaning.replacingOccurrences(of: "`", with: "") }, "\(rows)")
        #expect(
            rows.map(\.next) == Status.allCases.map { $0.nextStep.replacingOccurrences(of: "`", with: "") }, "\(rows)")
    }
}

/// Reading sections and tables out of help and README text.
enum HelpText {
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// The lines from `title` up to the next blank line.
    static func section(_ title: String, in help: String) -> String? {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == title }) else { return nil }
        let end =
            lines[start...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) ?? lines.endIndex
        return lines[start..<end].joined(separator: "\n")
    }

    /// `(code, text)` of each entry, continuation lines joined to their entry.
    static func entries(_ section: String) -> [(code: Int32, text: String)] {
        var result: [(code: Int32, text: String)] = []
        for line in section.split(separator: "\n").dropFirst() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let parts = trimmed.split(separator: " ", maxSplits: 1)
            if line.range(of: #"^ {1,2}\d{1,2}  "#, options: .regularExpression) != nil, let code = Int32(parts[0]) {
                result.append((code, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""))
            } else if !result.isEmpty {
                result[result.count - 1].text += " " + trimmed
            } else {
                result.append((-1, trimmed))
            }
        }
        return result
    }

    /// The text from a `## ` heading up to the next heading of that level.
    static func markdownSection(_ heading: String, in text: String) -> String? {
        guard let start = text.range(of: "\n" + heading + "\n") else { return nil }
        let rest = text[start.upperBound...]
        let end = rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    /// `(code, text, next)` of each `| code | text | next |` row of a three-column markdown table; code spans lose
    /// their backticks.
    static func markdownRows(_ section: String) -> [(code: Int32, text: String, next: String)] {
        section.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
            guard cells.count == 5, let code = Int32(cells[1]) else { return nil }
            return (code, cells[2], cells[3])
        }
    }
}
