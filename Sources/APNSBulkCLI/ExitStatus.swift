import ArgumentParser

/// The exit statuses of apns-bulk: the one table from which every command's `--help` EXIT STATUS section is made,
/// and which the README's exit-status table repeats (tests compare both with it).
///
/// The rule behind it: a file named on the command line that is missing, unreadable or malformed is status 1,
/// whichever option names it; an option that is unknown, missing or has an invalid value is 64; a failure that
/// no retry can cure once the campaign has started (APNs rejects the credentials, the TLS handshake fails) is 4.
enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case failure = 1
    case invalidRecords = 2
    case retryableLeft = 3
    case stoppedEarly = 4
    case interrupted = 5
    case deadlinePassed = 6
    case usage = 64

    var code: ExitCode { ExitCode(rawValue) }

    /// What the status means, whichever command ends with it: the README's table.
    var meaning: String {
        switch self {
        case .success:
            "finished; nothing left to retry"
        case .failure:
            "could not start or go on: a file named on the command line (input, template, key, certificate, CA) is "
                + "missing, unreadable or malformed, an output's folder is missing or not writable, the campaign has no "
                + "records, a PKCS#12 password is wrong, or a write failed (full disk)"
        case .invalidRecords:
            "finished; some records are invalid (`validate`: not every record is valid)"
        case .retryableLeft:
            "finished; some records ended retryable or in doubt: `replay` them"
        case .stoppedEarly:
            "stopped early: APNs rejected the credentials or the campaign's settings, no token of a topic was "
                + "accepted while they were called bad (BadDeviceToken, DeviceTokenNotForTopic: the other environment, "
                + "another app), or the transport cannot work "
                + "(TLS handshake failure: no TLS version or cipher suite in common, server certificate, host name, "
                + "pin or client certificate refused; no HTTP/2; fresh provider tokens declared expired (a wrong "
                + "clock); connections failing in a row for 20 s, whatever the pool size: refused, no HTTP/2 SETTINGS, "
                + "stalled, a protocol error), or the results' standard output closed (`--results -` keeps nothing to "
                + "continue from)"
        case .interrupted:
            "interrupted by SIGINT/SIGTERM: run the same command again to finish"
        case .deadlinePassed:
            "finished at the `--not-after` deadline: records not sent by then ended expired (or retryable, their "
                + "retry cut by it)"
        case .usage:
            "usage error: an unknown or missing option, an option value that is not valid, a result file that belongs "
                + "to another campaign or is not a result file, an output that is an input or a directory, a stream that "
                + "is not the one its unfinished run read, or a campaign no record of which could be sent (no topic anywhere)"
        }
    }

    /// What a scheduler (cron, a Kubernetes Job, a person at 3 a.m.) does next after `send` or `replay` ends with
    /// this status: the README's third column. Running the same command again is always safe: a finished campaign
    /// sends nothing and an unfinished one continues.
    var nextStep: String {
        switch self {
        case .success:
            "done; running again sends nothing"
        case .failure:
            "run again once the cause is fixed: it continues where the run stopped"
        case .invalidRecords:
            "done; fix the invalid records in the input, then `send` it with a new `--results` file and "
                + "`--skip-delivered` the old one: only what was not delivered goes (running again unchanged sends nothing)"
        case .retryableLeft:
            "done; `replay` the result file later for what is left (running `send` again sends nothing)"
        case .stoppedEarly:
            "fix the credentials, endpoint, settings or network, then run the same command again (the fixed one "
                + "the stop prints): it continues the campaign, sending nothing APNs accepted"
        case .interrupted:
            "run the same command again: it continues"
        case .deadlinePassed:
            "done; do not retry: the deadline passed (running again, or `replay` without a new `--not-after`, sends "
                + "nothing)"
        case .usage:
            "fix the command; a retry cannot help"
        }
    }

    /// The README's exit-status table, as it stands there (a test holds the README to it).
    static var markdownTable: String {
        var lines = ["| status | meaning | what a scheduler (or you) does next |", "|---|---|---|"]
        for status in allCases { lines.append("| \(status.rawValue) | \(status.meaning) | \(status.nextStep) |") }
        return lines.joined(separator: "\n")
    }

    /// One line of a command's EXIT STATUS section: a status and what it means for that command.
    struct Entry: Sendable, Equatable {
        let status: ExitStatus
        let text: String

        init(_ status: ExitStatus, _ text: String) {
            self.status = status
            self.text = text
        }
    }

    /// The entries of a command that ends in success, in failure or with a usage error, and in nothing else.
    static func entries(success: String, failure: String, usage: String = "usage error") -> [Entry] {
        [Entry(.success, success), Entry(.failure, failure), Entry(.usage, usage)]
    }

    /// `send` and `replay`: every status. Running the same command again is safe after any of them: a finished
    /// campaign sends nothing, an unfinished one continues.
    static let campaignEntries: [Entry] = [
        Entry(.success, "finished; nothing left to retry"),
        Entry(
            .failure,
            "could not start or go on: an input, template, key, certificate or CA file is missing, "
                + "unreadable or malformed, an output's folder is missing, the campaign has no records, a PKCS#12 "
                + "password is wrong, or a write failed (full disk); run again once fixed: it continues"),
        Entry(.invalidRecords, "finished; some records are invalid (fixed, send them with --skip-delivered)"),
        Entry(.retryableLeft, "finished; some records ended retryable or in doubt (replay them)"),
        Entry(
            .stoppedEarly,
            "stopped early: credentials or campaign settings rejected, TLS handshake failed "
                + "(TLS version, cipher suites, certificate, host name, pin, client certificate), no HTTP/2, fresh "
                + "provider tokens declared expired (a wrong clock), no working connection, or tokens of the other "
                + "environment or app; fix it, then run the same command again (the fixed one the stop prints): it "
                + "continues (with --results -, a closed standard output: nothing is kept, so it sends all again)"),
        Entry(.interrupted, "interrupted (SIGINT/SIGTERM): run the same command again to finish"),
        Entry(
            .deadlinePassed,
            "finished at the --not-after deadline: records not sent by then ended expired; do "
                + "not retry (running again sends nothing; replay --not-after with a new deadline sends them)"),
        Entry(
            .usage,
            "usage error, a result file of another campaign (--overwrite replaces it) or of another "
                + "stream, an output that is an input, a directory or (--results) not a result file, or no topic anywhere"
        ),
    ]

    static let validateEntries: [Entry] = [
        Entry(.success, "every record is valid"),
        Entry(
            .failure,
            "an input file or the template is missing, unreadable or malformed, or the campaign has no "
                + "records (as for send)"),
        Entry(.invalidRecords, "some records are invalid"),
        Entry(.usage, "usage error, --results not a result file or an input, or no topic anywhere (as for send)"),
    ]

    static let pruneEntries = entries(
        success: "the list was written (possibly empty)",
        failure: "a result file could not be read, or the list could not be written")

    static let reportEntries = entries(
        success: "the report was written",
        failure: "a result or summary file is unreadable, or the report unwritable")

    static let tokenEntries = entries(
        success: "the token was printed",
        failure: "the key file is missing, unreadable, or not an EC P-256 private key",
        usage: "usage error: a missing option, or an id that is not 10 letters or digits")

    static let pinEntries = entries(
        success: "every file was read",
        failure: "some file is missing, unreadable, or holds no readable certificate")

    static let mockEntries = entries(
        success: "stopped by SIGINT/SIGTERM or after --duration",
        failure: "could not start (unreadable key, certificate or registry, address in use)")

    /// The widest EXIT STATUS line. argument-parser wraps the discussion at the terminal width (80 columns when it
    /// is not a terminal) with no indent, and the man pages show it indented by 5 columns: 72 keeps every line whole
    /// in both at 80 columns.
    static let helpWidth = 72

    /// The EXIT STATUS section of a command's `--help`: one entry a line, the code right-aligned in 3 columns, long
    /// texts wrapped with a hanging indent under the text.
    static func helpSection(_ entries: [Entry], width: Int = helpWidth) -> String {
        var lines = ["EXIT STATUS"]
        for entry in entries {
            let code = String(entry.status.rawValue)
            let prefix = String(repeating: " ", count: max(0, 3 - code.count)) + code + "  "
            let indent = String(repeating: " ", count: prefix.count)
            var line = prefix
            var lineHasWord = false
            for word in entry.text.split(separator: " ") {
                if lineHasWord, line.count + 1 + word.count > width {
                    lines.append(line)
                    line = indent
                    lineHasWord = false
                }
                line += (lineHasWord ? " " : "") + word
                lineHasWord = true
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
