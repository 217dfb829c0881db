import APNSCore
import APNSPipeline
import ArgumentParser
import Foundation

/// `apns-bulk validate`: reads and checks campaign files exactly as `send` would, sending nothing.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check campaign files as send would, without sending: every invalid record with its line and reason.",
        usage: "apns-bulk validate <file> ... [--template <file>] [<options>]",
        discussion: """
            Prints one line per invalid record to stdout (FILE:LINE: REASON: DETAIL), or writes result lines for \
            them with --results; duplicates are counted. A summary goes to stderr. CSV is read as send reads it: \
            the delimiter (',' ';' or tab) found from each file's header unless --csv-delimiter names it, the \
            token column by --token-column, an empty cell where the template has a placeholder outside quotes \
            an invalid record (TemplateValueInvalid).

            EXAMPLES
              apns-bulk validate campaign.ndjson --topic com.example.app
              apns-bulk validate users.csv --template alert.json --topic com.example.app
              cat export.csv | apns-bulk validate - --input-format csv \\
                --template alert.json --topic com.example.app

            \(ExitStatus.helpSection(ExitStatus.validateEntries))
            """
    )

    @Argument(
        help: ArgumentHelp(
            "Campaign files (.ndjson, .csv, .tsv, optionally .gz; - for standard input).", valueName: "file"),
        completion: ValueCompletion.campaignFiles)
    var files: [String]

    @OptionGroup var campaign: CampaignOptions

    @Option(
        name: .customLong("results"),
        help: ArgumentHelp("Write result lines (outcome input_error) for invalid records here.", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var results: String?

    /// Report text buffered before it goes to standard output.
    static let reportFlushBytes = 1 << 16
    func run() throws {
        let inputs = campaign.inputs(files)
        var options = try campaign.readerOptions()
        options.keepsPayloads = false  // checked as `send` checks them; nothing here needs their bytes afterwards
        let reader = CampaignReader(inputs: inputs, options: options)
        let inputFiles = InputFileList(inputs.map(\.path))
        // The campaign-wide verdicts `send` gives before its first request (no records: 1; no topic anywhere: 64),
        // the same way and once; and --results checked as `send` checks it, before it is created.
        try CampaignRunner.reportingStartFailure { () throws(PipelineError) in
            if let results {
                try OutputPathCheck.checkValidateResultFile(
                    results, reading: files + [campaign.template].compactMap { $0 })
            }
            try reader.prepareToStart()
        }
        let writer = try results.map { path throws(PipelineError) in
            try ResultWriter(path: path, format: .ndjson, mode: .create, inputFiles: inputFiles)
        }
        LargeAllocations.mapSeparately()
        // With a second core, the duplicate filter runs on it, beside the reader.
        var duplicates = DuplicateCounter(
            scratchDirectory: DuplicateFilter.temporaryDirectory, onItsOwnThread: UsableCores.count >= 2)
        var valid = 0
        var invalid = 0
        var report = ""
        // Checked as `send` checks them, without building the notifications: a valid record's pair comes straight
        // from the reader's buffer.
        try reader.checkRecords(
            valid: { _, bytes, hex, topic throws(PipelineError) in
                valid += 1
                try duplicates.add(tokenBytes: bytes, hex: hex, topic: topic, progress: reader.readProgress)
            },
            invalid: { key, error, tokenText, topicText throws(PipelineError) in
                invalid += 1
                if let writer {
                    // The same line `send` writes for an invalid record.
                    try writer.write(
                        ResultRecord(
                            key: key, outcome: .inputError, token: tokenText, topic: topicText,
                            reason: error.code.rawValue, detail: error.detail))
                } else {
                    // One line per invalid record, always: the path and the detail may quote anything.
                    let path = inputFiles.path(at: key.fileIndex)
                    let line = "\(path):\(key.line): \(error.code.rawValue): \(error.detail)"
                    report += PrintableText.escaping(line) + "\n"
                    if report.utf8.count > Self.reportFlushBytes {
                        StandardStream.output(report)
                        report = ""
                    }
                }
            })
        let duplicateCount = try duplicates.finish(progress: reader.readProgress)
        StandardStream.output(report)
        try writer?.flush()
        var summary =
            CountedNoun.text(valid + invalid, "record") + ": \(valid) valid, \(invalid) invalid, "
            + CountedNoun.text(duplicateCount, "duplicate")
        if reader.recordsInOtherShards > 0 { summary += ", \(reader.recordsInOtherShards) in other shards" }
        StandardStream.error(summary + "\n")
        if invalid > 0 { throw ExitStatus.invalidRecords.code }
    }
}

// MARK: - UsableCores

/// How many cores this process may run on: the affinity mask Linux reports (`Cpus_allowed` in
/// `/proc/self/status`, set by `taskset` or a container's cpuset), which `ProcessInfo.activeProcessorCount` does
/// not read. Elsewhere, or when the mask cannot be read, the processor count.
enum UsableCores {
    static var count: Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let mask = allowedCores(inStatus: status)
        else {
            return ProcessInfo.processInfo.activeProcessorCount
        }
        return mask
    }

    /// The number of cores the `Cpus_allowed:` line of a `/proc/<pid>/status` text allows (hex digits, in groups
    /// of eight separated by commas), or nil without one.
    static func allowedCores(inStatus status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else {
            return nil
        }
        var cores = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character != "," && !character.isWhitespace {
            guard let digit = character.hexDigitValue else { return nil }
            cores += digit.nonzeroBitCount
        }
        return cores > 0 ? cores : nil
    }
}
