import ArgumentParser
import Foundation

/// The `apns-bulk` root command: owns the list of subcommands and the tool's overview text.
public struct APNSBulkCommand: ParsableCommand {
    /// The command's name, abstract and subcommands.
    public static let configuration = CommandConfiguration(
        commandName: "apns-bulk",
        abstract: "Send Apple Push Notifications in bulk, from files.",
        discussion: """
            Reads campaign files (NDJSON or CSV), validates every record, sends the notifications over a few \
            persistent HTTP/2 connections to APNs and writes one result line per input record.
            """,
        version: APNSBulkVersion.string,
        subcommands: [
            SendCommand.self, ValidateCommand.self, ReplayCommand.self, PruneCommand.self,
            ReportCommand.self, TokenCommand.self, PinCommand.self, MockCommand.self,
        ]
    )

    /// The command as the argument parser creates it.
    public init() {}

    /// Runs the command line as argument-parser does, except that a help screen keeps its EXAMPLES whole, a
    /// misspelt command or option is answered with the name meant (`CommandLineSpelling`), and every error reads
    /// `apns-bulk: error: …`, as the tool's own messages do.
    public static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            // Only a command line that did not parse is checked for a near miss: the check reads every command's
            // help, which a run that parsed never pays for.
            if exitCode(for: error) != .success, let mistake = CommandLineSpelling.apnsBulk.mistake(in: arguments) {
                StandardStream.error(message: mistake)
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            finish(with: error)
        }
        do {
            try command.run()
        } catch {
            finish(with: error)
        }
    }

    /// Ends the process for `error`: a help screen (EXAMPLES whole) with status 0, or the error's one line and status.
    private static func finish(with error: any Error) -> Never {
        let code = exitCode(for: error)
        if code == .success {
            guard let help = helpScreen(for: error) else { exit(withError: error) }
            print(help)
            Foundation.exit(ExitCode.success.rawValue)
        }
        let message = errorMessage(for: error)
        if !message.isEmpty { StandardStream.error(message + "\n") }
        Foundation.exit(code.rawValue)
    }

    /// argument-parser's message for `error` as one line in the tool's voice: `apns-bulk: error: …`, and where
    /// argument-parser adds usage lines, the help screen to read instead (`; see 'apns-bulk send --help'`). Empty
    /// for an exit status the command reported itself.
    static func errorMessage(for error: any Error) -> String {
        let lines = fullMessage(for: error).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard var message = lines.first else { return "" }
        if let see = lines.first(where: { $0.hasPrefix("See '") && $0.contains("--help'") }),
            let help = see.split(separator: "'").dropFirst().first
        {
            if message.hasSuffix(".") { message.removeLast() }
            message += "; see '\(help)'"
        }
        return StandardStream.errorLine(message)
    }

    /// The help screen `error` asks for (`--help`, `help <command>`), wrapped to `columns` (the terminal's width
    /// when nil) but for its EXAMPLES, whose lines are commands to copy: they are kept as written, whatever the
    /// width. Nil when `error` asks for no screen with examples.
    static func helpScreen(for error: any Error, columns: Int? = nil) -> String? {
        let wrapped = fullMessage(for: error, columns: columns)
        let lines = wrapped.split(separator: "\n", omittingEmptySubsequences: false)
        let whole = fullMessage(for: error, columns: 100_000).split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "EXAMPLES"), let wholeStart = whole.firstIndex(of: "EXAMPLES") else {
            return nil
        }
        let end = lines[start...].firstIndex(of: "") ?? lines.endIndex
        let wholeEnd = whole[wholeStart...].firstIndex(of: "") ?? whole.endIndex
        return (lines[..<start] + whole[wholeStart..<wholeEnd] + lines[end...]).joined(separator: "\n")
    }
}

/// The tool's version string, printed by `--version`.
public enum APNSBulkVersion {
    /// The tool's version, as `--version` prints it.
    public static let string = "0.1.0"
}
