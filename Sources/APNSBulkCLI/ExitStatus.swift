import ArgumentParser

/// The exit statuses of apns-bulk, one meaning each, documented in `--help` and the README.
enum ExitStatus: Int32, CaseIterable {
    /// Finished: every record has its final line and none is left to retry (input errors, prunes and duplicates
    /// are results, not failures).
    case success = 0
    /// Could not start or could not go on: unreadable input or key, bad certificate, a full disk.
    case failure = 1
    /// `validate`: some records are invalid. `send`: finished, and some records are input errors.
    case invalidRecords = 2
    /// Finished, and some records ended retryable or in doubt: `apns-bulk replay` them later.
    case retryableLeft = 3
    /// Stopped early: APNs rejected the credentials or the campaign's settings, or the transport cannot work;
    /// the rest is marked not_sent.
    case stoppedEarly = 4
    /// Interrupted by SIGINT/SIGTERM: run again with `--resume` to finish.
    case interrupted = 5

    var code: ExitCode { ExitCode(rawValue) }

    /// The text for `--help`.
    static let helpText = """
        EXIT STATUS
          0  finished; nothing left to retry
          1  could not start or go on (unreadable input or key, TLS failure, full disk)
          2  finished; some records are invalid (validate: not every record is valid)
          3  finished; some records ended retryable or in doubt (replay them)
          4  stopped early: credentials or campaign settings rejected, or the transport cannot work
          5  interrupted (SIGINT/SIGTERM): run again with --resume to finish
         64  usage error
        """
}
