import ArgumentParser
import Testing

@testable import APNSBulkCLI

/// Every command's EXAMPLES, as `--help` prints them: commands to copy, so each line stays as written at any
/// terminal width, and fits 80 columns.
@Suite("help: examples kept whole at any width")
struct HelpExamplesTests {
    /// The EXAMPLES lines of a command's discussion, as written in the source.
    static func written(_ type: any ParsableCommand.Type) -> [Substring] {
        let lines = type.configuration.discussion.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "EXAMPLES") else { return [] }
        let end = lines[start...].firstIndex(of: "") ?? lines.endIndex
        return Array(lines[start..<end])
    }

    @Test(
        "--help at 40, 60, 80 and 200 columns prints every example line as written",
        arguments: ExitStatusHelpTests.commands.map(\.name))
    func examplesWhole(name: String) throws {
        let command = try #require(ExitStatusHelpTests.commands.first { $0.name == name })
        let written = Self.written(command.type)
        #expect(written.count > 1, "\(name) has no EXAMPLES")
        for line in written.dropFirst() { #expect(line.count <= 80, "\(name): \(line.count) columns: \(line)") }
        for columns in [40, 60, 80, 200] {
            do {
                var help = try APNSBulkCommand.parseAsRoot([name, "--help"])
                try help.run()  // argument-parser's help command: it throws the help request
                Issue.record("--help ran as a command")
            } catch {
                let screen = try #require(
                    APNSBulkCommand.helpScreen(for: error, columns: columns), "\(name): no help screen")
                let printed = try #require(
                    HelpText.section("EXAMPLES", in: screen), "\(name) at \(columns): no EXAMPLES")
                #expect(
                    printed.split(separator: "\n", omittingEmptySubsequences: false) == written,
                    "\(name) at \(columns) columns:\n\(printed)")
                #expect(screen.contains("EXIT STATUS"), "\(name) at \(columns): the rest of the screen is kept")
            }
        }
    }

    @Test("a screen without examples, and anything not a help screen, is left to argument-parser")
    func notHelp() {
        do {
            _ = try APNSBulkCommand.parseAsRoot(["--version"])
            Issue.record("--version parsed as a command")
        } catch {
            #expect(APNSBulkCommand.helpScreen(for: error) == nil)
        }
    }
}
