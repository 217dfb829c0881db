import APNSPipeline
import ArgumentParser
import Foundation

/// Where `send` and `replay` write results, summaries and metrics, and how they show progress.
struct OutputOptions: ParsableArguments {
    @Option(
        name: .customLong("results"),
        help: ArgumentHelp(
            "The result file: one line per input record. Running the same campaign again on it sends nothing once it is "
                + "finished and continues it while it is not; another campaign is refused.", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var results: String

    @Flag(
        name: .customLong("overwrite"),
        help:
            "Replace an existing result file (and its journal and campaign record), even one of another or an unfinished campaign: every record is sent again, also those delivered before (send --skip-delivered sends only the rest)."
    )
    var overwrite = false

    @Option(name: .customLong("results-format"), help: "ndjson or csv.", completion: ValueCompletion.resultFormats)
    var resultsFormat: String = "ndjson"

    @Option(
        name: .customLong("summary"), help: ArgumentHelp("Also write the summary as JSON here.", valueName: "file"),
        completion: ValueCompletion.json)
    var summary: String?

    @Option(
        name: .customLong("metrics"),
        help: ArgumentHelp(
            "Also write Prometheus metrics here, for node_exporter's textfile collector (a .prom file, renamed into place).",
            valueName: "file"), completion: ValueCompletion.prometheusText)
    var metrics: String?

    @Option(
        name: .customLong("metrics-label"),
        help: ArgumentHelp(
            "The metrics' campaign label (default: the result file's name without its extension).", valueName: "name"))
    var metricsLabel: String?

    @OptionGroup(title: "Pushgateway")
    var pushgateway: PushgatewayOptions

    @Option(
        name: .customLong("progress"),
        help:
            "auto (live lines on a terminal, a log line every 10 s otherwise), bar, log, json (one object per line every 10 s) or none.",
        completion: ValueCompletion.progressModes)
    var progress: String = "auto"

    @Flag(
        name: .customLong("durable"),
        help:
            "Force result and journal lines to the disk (fdatasync, grouped) so a power cut loses nothing --resume needs."
    )
    var durable = false

    @Option(
        name: .customLong("report"),
        help: ArgumentHelp("Also write the run's HTML report here (see `apns-bulk report`).", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var report: String?

    mutating func validate() throws {
        guard ResultFormat(rawValue: resultsFormat) != nil else {
            throw ValidationError("--results-format must be ndjson or csv.")
        }
        guard Self.progressModes.contains(progress) else {
            throw ValidationError("--progress must be auto, bar, log, json or none.")
        }
    }

    var format: ResultFormat { ResultFormat(rawValue: resultsFormat) ?? .ndjson }

    /// Before anything is created or sent: the result file and every other output can be written where they are
    /// named, none is a file the run reads (`reading`), and no two are the same file (`OutputPathCheck`).
    func checkFiles(reading: [String]) throws(PipelineError) {
        try OutputPathCheck.checkResultFile(results, reading: reading)
        var outputs = [(option: "--results", path: results)]
        for (option, path) in [("--summary", summary), ("--metrics", metrics), ("--report", report)] {
            guard let path else { continue }
            try OutputPathCheck.checkOutput(
                path, option: option, reading: reading, renamedIntoPlace: option == "--metrics")
            outputs.append((option, path))
        }
        try OutputPathCheck.checkDistinct(outputs)
    }

    /// `--results -` keeps no journal and no campaign record: nothing to `--resume`.
    func validateStandardOutput(resume: Bool) throws {
        guard results == "-", resume else { return }
        throw ValidationError(
            "--resume continues a result file; standard output (--results -) keeps nothing to continue.")
    }

    /// The values `--progress` accepts (ProgressPrinter reads them; the completions offer them).
    static let progressModes = ["auto", "bar", "log", "json", "none"]
}

/// How `send` and `replay` retry, pace and stop.
struct DeliveryOptions: ParsableArguments {
    @Option(
        name: .customLong("rate"), parsing: .unconditional,
        help: ArgumentHelp("Start at most this many requests per second.", valueName: "n"))
    var rate: Double?

    @Option(
        name: .customLong("max-attempts"), parsing: .unconditional,
        help: "Tries per record in all for 429, 5xx and the like.")
    var maximumAttempts: Int = 5

    @Option(
        name: .customLong("stop-after"), parsing: .unconditional,
        help: "Stop the campaign after this many credential or campaign-wide rejections in a row.")
    var stopAfter: Int = 5

    @Option(
        name: .customLong("max-in-flight"), parsing: .unconditional,
        help: ArgumentHelp(
            "Requests in flight at most, across all connections (default: as many as the measured rate needs, up to the servers' stream limits).",
            valueName: "n"))
    var maximumInFlight: Int?

    @Flag(
        name: .customLong("allow-duplicates"),
        help: "Send later copies of a (token, topic) pair instead of reporting them as duplicates.")
    var allowDuplicates = false

    @Flag(
        name: .customLong("resend-in-doubt"), help: "Send again requests whose answer was lost (they may arrive twice)."
    )
    var resendInDoubt = false

    @Option(
        name: .customLong("not-after"),
        help: ArgumentHelp(
            "The campaign's deadline: an ISO-8601 time (2026-12-02T18:00:00Z, an offset allowed) or a duration after its "
                + "first start (6h, 1h30m). Nothing is sent after it; records not sent by then end expired (exit status 6).",
            valueName: "time"))
    var notAfter: String?

    mutating func validate() throws {
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive.") }
        guard (1...100).contains(maximumAttempts) else { throw ValidationError("--max-attempts must be 1 to 100.") }
        guard stopAfter >= 1 else { throw ValidationError("--stop-after must be at least 1.") }
        if let maximumInFlight, maximumInFlight < 1 { throw ValidationError("--max-in-flight must be at least 1.") }
        _ = try deadline()
    }

    /// `--not-after`, read: nil when not given; an unreadable value is a usage error naming the forms it takes.
    func deadline() throws -> NotAfter? {
        guard let notAfter else { return nil }
        guard let value = NotAfter(parsing: notAfter) else {
            throw ValidationError(
                "--not-after \(notAfter): give an ISO-8601 time with its zone (2026-12-02T18:00:00Z, "
                    + "2026-12-02T19:00:00+01:00) or a duration after the campaign's first start (90m, 6h, 1d12h).")
        }
        return value
    }

    var configuration: DispatcherConfiguration {
        var configuration = DispatcherConfiguration()
        configuration.ratePerSecond = rate
        configuration.retry.maximumAttempts = maximumAttempts
        configuration.stopAfterConsecutiveFailures = stopAfter
        configuration.allowDuplicates = allowDuplicates
        configuration.resendInDoubt = resendInDoubt
        if let maximumInFlight { configuration.window.maximum = maximumInFlight }
        return configuration
    }
}
