import ArgumentParser

/// The `apns-bulk` root command: owns the list of subcommands and the tool's overview text.
public struct APNSBulkCommand: ParsableCommand {
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

    public init() {}
}

/// The tool's version string, printed by `--version`.
public enum APNSBulkVersion {
    public static let string = "0.1.0"
}
