import APNSCore
import APNSPipeline
import ArgumentParser

/// What the records of a campaign default to, and how to read them: topic, push type, priority, expiration,
/// collapse id, template, CSV token column and delimiter, record length, shard.
struct CampaignOptions: ParsableArguments {
    @Option(
        name: .customLong("topic"),
        help: ArgumentHelp(
            "Default apns-topic: the bundle id (plus the suffix the push type needs) (or APNS_TOPIC).",
            valueName: "topic"))
    var topic: String?

    @Option(
        name: .customLong("push-type"), help: ArgumentHelp("Default apns-push-type.", valueName: "type"),
        completion: ValueCompletion.pushTypes)
    var pushType: String = "alert"

    @Option(
        name: .customLong("priority"), help: ArgumentHelp("Default apns-priority: 10, 5 or 1.", valueName: "n"),
        completion: ValueCompletion.priorities)
    var priority: String?

    @Option(
        name: .customLong("expiration"),
        help: ArgumentHelp(
            "Default apns-expiration: epoch seconds (0: deliver once), or a duration after the record's first send (30m, 24h, 7d, 1h30m).",
            valueName: "when"))
    var expiration: String?

    @Option(
        name: .customLong("collapse-id"),
        help: ArgumentHelp("Default apns-collapse-id (at most 64 bytes).", valueName: "id"))
    var collapseID: String?

    @Option(
        name: .customLong("template"),
        help: ArgumentHelp(
            "Payload template: {{column}} placeholders filled from CSV rows or NDJSON \"vars\".", valueName: "file"),
        completion: ValueCompletion.json)
    var template: String?

    @Option(
        name: .customLong("input-format"),
        help: ArgumentHelp(
            "ndjson or csv: the format of every input, whatever its name (default: by name, .csv, .tsv and their .gz are "
                + "CSV, the rest and standard input NDJSON). For CSV read from - or <(...).", valueName: "format"),
        completion: ValueCompletion.inputFormats)
    var inputFormat: String?

    @Option(name: .customLong("token-column"), help: "The CSV column that holds the device token.")
    var tokenColumn: String = "token"

    @Option(
        name: .customLong("csv-delimiter"),
        help: ArgumentHelp(
            "The CSV delimiter: ',', ';' or tab (also \\t). Default: detected per file from its header row.",
            valueName: "char"))
    var csvDelimiter: String?

    @Option(
        name: .customLong("max-record-bytes"), parsing: .unconditional,
        help: "The longest NDJSON line or CSV record accepted.")
    var maximumRecordBytes: Int = CampaignReaderOptions.defaultMaximumRecordLength

    @Option(
        name: .customLong("keep"),
        help: ArgumentHelp(
            "Copy these NDJSON members or CSV columns (e.g. user_id,device_id) into every result line and prune row of "
                + "their record, to join them back to your rows; a CSV header without one is refused.",
            valueName: "field,..."))
    var keep: String?

    @Option(
        name: .customLong("shard"),
        help: ArgumentHelp(
            "Handle only shard K of N (0-based K, e.g. $JOB_COMPLETION_INDEX/4): a stable hash of the token decides.",
            valueName: "K/N"))
    var shard: String?

    mutating func validate() throws {
        topic = EnvironmentDefault.value(topic, "APNS_TOPIC")
        guard maximumRecordBytes >= 1024 else { throw ValidationError("--max-record-bytes must be at least 1024.") }
        if let inputFormat, CampaignInput.Format(rawValue: inputFormat) == nil {
            throw ValidationError("--input-format must be ndjson or csv.")
        }
        if let csvDelimiter, CSVDelimiter(option: csvDelimiter) == nil {
            throw ValidationError(
                "--csv-delimiter must be ',', ';' or tab (or \\t), not '\(PrintableText.escaping(csvDelimiter))'.")
        }
        _ = try defaultsAndShard()
        _ = try keptFields()
    }

    /// `--keep`, checked: a bad field name is a usage error naming it.
    func keptFields() throws -> KeptFields? {
        guard let keep else { return nil }
        do {
            return try KeptFields(parsing: keep)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The reader options these flags describe. Reads the template: a template file that is missing, unreadable or
    /// invalid throws its `PipelineError` (exit status 1, like any unreadable file), not a usage error.
    func readerOptions() throws -> CampaignReaderOptions {
        let (defaults, shard) = try defaultsAndShard()
        var options = CampaignReaderOptions(
            defaults: defaults,
            template: try template.map { path in
                try OptionFileError.reading("--template") { try PayloadTemplate(contentsOfFile: path) }
            },
            shard: shard, maximumRecordLength: maximumRecordBytes, tokenColumn: tokenColumn)
        options.keep = try keptFields()
        options.csvDelimiter = csvDelimiter.flatMap(CSVDelimiter.init(option:))
        return options
    }

    /// The option values alone, checked (no file is read): an invalid value is a usage error naming its option.
    private func defaultsAndShard() throws -> (CampaignDefaults, ShardSelector) {
        let defaults = CampaignDefaults(
            topic: try Self.parse(topic, "--topic", Topic.init(validating:)),
            pushType: try Self.parse(pushType, "--push-type", PushType.init(parsing:)) ?? .alert,
            priority: try Self.parse(priority, "--priority", Priority.init(parsing:)),
            expiration: try Self.parse(expiration, "--expiration", ExpirationSetting.init(parsing:)),
            collapseID: try Self.parse(collapseID, "--collapse-id", CollapseID.init(validating:)))
        do {
            let shard = try shard.map { spec throws(PipelineError) in try ShardSelector(parsing: spec) } ?? .all
            return (defaults, shard)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// A default, checked exactly like a record's own value (docs/FILES.md, "Header values"); a bad one is a usage
    /// error that names its option. Input errors quote input escaped, so the message stays one printable line.
    private static func parse<Value>(
        _ text: String?, _ option: String, _ parse: (String) throws(InputError) -> Value
    ) throws(ValidationError) -> Value? {
        guard let text else { return nil }
        do {
            return try parse(text)
        } catch {
            throw ValidationError("\(option): \(error.detail)")
        }
    }

    /// The campaign these options and `files` describe, for the result file's campaign record: the inputs and the
    /// template by content, and every option that changes what is sent (`CampaignIdentity`).
    func identity(files: [String], delivery: DeliveryOptions, output: OutputOptions) throws -> CampaignIdentity {
        let (defaults, shard) = try defaultsAndShard()
        var settings: [String: String] = [
            "--push-type": defaults.pushType.rawValue,
            "--token-column": tokenColumn,
            "--max-record-bytes": String(maximumRecordBytes),
            "--results-format": output.format.rawValue,
        ]
        settings["--topic"] = defaults.topic?.value
        settings["--priority"] = priority
        settings["--expiration"] = expiration
        settings["--collapse-id"] = collapseID
        settings["--shard"] = self.shard.map { _ in shard.description }
        settings["--input-format"] = inputFormat
        settings["--csv-delimiter"] = csvDelimiter.flatMap(CSVDelimiter.init(option:))?.optionValue
        // Part of the identity: a resumed run's lines must carry the same fields as the earlier run's (a CSV
        // result file's header names them).
        settings["--keep"] = try keptFields()?.optionValue
        if let template { settings["--template"] = try CampaignIdentity.Input.reading(template).fingerprint }
        if delivery.allowDuplicates { settings["--allow-duplicates"] = "" }
        return CampaignIdentity(
            command: "send", inputs: try files.map(CampaignIdentity.Input.reading), settings: settings)
    }

    /// The inputs, with `-` for standard input, in `--input-format` when given, else in the format their names say.
    func inputs(_ paths: [String]) -> [CampaignInput] {
        let format = inputFormat.flatMap(CampaignInput.Format.init(rawValue:))
        return paths.map { CampaignInput(path: $0, format: format) }
    }
}
