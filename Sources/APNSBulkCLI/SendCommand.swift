import APNSCore
import APNSPipeline
import APNSTransport
import ArgumentParser
import Foundation

#if canImport(Glibc)
    internal import CLinux
#endif

/// `apns-bulk send`: reads campaign files, sends every valid record, writes one result line per record.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a campaign: NDJSON or CSV records in, one result line per record out.",
        discussion: """
            Each NDJSON line is an object with "token" and "payload" (a JSON object sent byte for byte), and \
            optionally "topic", "push_type", "priority", "expiration", "collapse_id", "apns_id", or "vars" for \
            --template. A CSV file has a header row with a token column (--token-column); its delimiter, ',' ';' \
            or tab as spreadsheets export them, is found from the header unless --csv-delimiter names it. Every \
            column fills the template's {{column}} placeholders; one outside quotes ("badge": {{badge}}) needs a \
            number, true, false or null, so an empty cell there is an invalid record. CSV from standard input \
            needs --input-format csv. Invalid records are reported with their line and reason and never sent; \
            later copies of a (token, topic) pair are reported as duplicates.

            An expiration (--expiration, "expiration") is epoch seconds, 0, or a duration such as 30m, 24h or 7d: \
            counted from the record's first send, sent as that epoch, and kept by its retries and by the \
            retryable and in_doubt lines replay sends again (docs/RUNNING-AGAIN.md, "Relative expiration").

            The result file gets a line per record as answers arrive; a journal beside it (<results>.journal) lets \
            a run be finished after a crash or kill -9 without sending anything twice: records sent but never \
            answered are reported in_doubt (resent only with --resend-in-doubt).

            RUNNING AGAIN
            A campaign record beside the result file (<results>.campaign) names the campaign: its inputs by \
            content and every option that changes what is sent. The same command run again sends nothing once \
            the campaign has finished (it prints the summary and exits with the campaign's status), and continues \
            it while it is unfinished (as --resume does). Another campaign on the same result file is refused \
            (status 64), naming what differs, unless --overwrite is given. A retried pod or a cron job needs no \
            shell logic to be safe.

            After fixing invalid records in the input (status 2), send with a new --results file and \
            --skip-delivered naming the earlier one: only the records it has no delivered, in-doubt or prune \
            line for are sent (the refusal of the changed input prints that command). --overwrite sends every \
            record again.

            DEADLINE
            --not-after 2026-12-02T18:00:00Z (an offset allowed) or --not-after 6h (after the campaign's first \
            start) sends nothing after that time: requests in flight then are answered as usual, and every record \
            not sent by then ends expired. The deadline is kept in the campaign record: the same command run \
            again, --resume and a retried pod keep it, and after it send nothing. Exit status 6 tells a scheduler \
            not to retry: the deadline passed (a replay with a new --not-after sends the expired records).

            SEVERAL KEYS
            --topic-key BUNDLE-ID=FILE,key-id=ID,team-id=ID (repeatable) signs the topics of one app (the bundle \
            id, and every topic starting with it and a dot) with its own key; --key signs the rest. Each key has \
            its own provider token and its own connections (--connections applies per key). A record whose topic \
            no key covers ends input_error TopicNotCovered; a --topic no key covers refuses the campaign (64).

            METRICS
            --metrics FILE writes the run's Prometheus metrics for node_exporter's textfile collector; \
            --pushgateway http://host:9091 or https://… (or APNS_PUSHGATEWAY) POSTs the same metrics to a \
            Pushgateway when the run ends, grouped by job apns-bulk, campaign (--metrics-label) and shard; \
            --pushgateway-interval 30s also pushes during the run. A run that did not finish pushes no \
            last-success time, so the gateway keeps the last finished run's. Basic authentication: \
            --pushgateway-user and APNS_PUSHGATEWAY_PASSWORD or --pushgateway-password-file. A push waits at most \
            5 s; a failed one is a warning line and never changes the exit status.

            A run from standard input or a pipe continues only with the same stream: the records read again are \
            held to their result lines and journal before any request (status 64, naming the line, otherwise).

            EXAMPLES
              export APNS_KEY_FILE=AuthKey_ABC123DEFG.p8 APNS_KEY_ID=ABC123DEFG
              export APNS_TEAM_ID=DEF123GHIJ APNS_TOPIC=com.example.app
              apns-bulk send campaign.ndjson --results out.ndjson
              apns-bulk send users.csv --template alert.json --results out.ndjson
              apns-bulk send export.csv --template alert.json --results out.ndjson \\
                --token-column device_token --csv-delimiter ';'
              apns-bulk send campaign.ndjson --results out.ndjson --expiration 24h
              apns-bulk send campaign.ndjson --results out.ndjson --resume
              apns-bulk send campaign.ndjson --results out.ndjson --not-after 6h
              apns-bulk send big.ndjson.gz --shard "$JOB_COMPLETION_INDEX/8" \\
                --results "out-$JOB_COMPLETION_INDEX.ndjson"
              export KEY2=AuthKey_XYZ987WVUT.p8,key-id=XYZ987WVUT,team-id=TEAM000002
              apns-bulk send two-apps.ndjson --results out.ndjson \\
                --topic-key "com.example.second=$KEY2"

            \(ExitStatus.helpSection(ExitStatus.campaignEntries))
            """
    )

    @Argument(
        help: ArgumentHelp(
            "Campaign files (.ndjson, .csv, .tsv, optionally .gz; - for standard input).", valueName: "file"),
        completion: ValueCompletion.campaignFiles)
    var files: [String]

    @OptionGroup var output: OutputOptions
    @OptionGroup var campaign: CampaignOptions
    @OptionGroup var sending: SendingOptions

    @Option(
        name: .customLong("skip-delivered"),
        help: ArgumentHelp(
            "An earlier result file of this campaign (repeatable): records whose token and topic have a delivered, in-doubt "
                + "or prune line in it are not sent (a duplicate line names it). For sending the records fixed since.",
            valueName: "results"), completion: ValueCompletion.resultFiles)
    var skipDelivered: [String] = []

    @Flag(
        name: .customLong("resume"),
        help:
            "Finish the unfinished run recorded in the result file and its journal (the same command does it on its own; this also continues a result file without a campaign record)."
    )
    var resume = false

    mutating func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one campaign file.") }
        guard files.filter({ $0 == "-" }).count <= 1 else {
            throw ValidationError("Standard input (-) can be read once.")
        }
        guard !(resume && output.overwrite) else {
            throw ValidationError("--resume continues a result file, --overwrite replaces it: give one.")
        }
        try output.validateStandardOutput(resume: resume)
        guard !skipDelivered.contains(output.results) else {
            throw ValidationError(
                "--skip-delivered \(output.results) is the --results file: name a new one for this run.")
        }
    }

    func run() throws {
        let reader = try campaign.readerOptions()
        try sending.runCampaign(
            inputs: campaign.inputs(files), reading: files + [campaign.template].compactMap { $0 } + skipDelivered,
            reader: reader, output: output, resume: resume, topic: campaign.topic,
            identity: {
                var identity = try campaign.identity(files: files, delivery: sending.delivery, output: output)
                if !skipDelivered.isEmpty {
                    identity.settings["--skip-delivered"] = try skipDelivered.map { path throws(PipelineError) in
                        try CampaignIdentity.Input.reading(path).fingerprint ?? path
                    }.joined(separator: " ")
                }
                return identity
            }
        ) { options, engine, progress, onStart in
            if !options.dispatch.allowDuplicates { LargeAllocations.mapSeparately() }
            var options = options
            options.skipDelivered = skipDelivered
            return try SendRun.run(options, engine: engine, progress: progress, onStart: onStart)
        }
    }
}

// MARK: - LargeAllocations

/// Owns the one allocator setting the duplicate filter needs: glibc serves blocks of 64 KiB and more from their
/// own mappings, so the filter's table segments, regrown one at a time, go back to the system when replaced instead
/// of leaving holes in the heap that stay resident (about 2 bytes a pair at 10 million pairs; docs/FILES.md,
/// "Duplicates").
enum LargeAllocations {
    static let mappedThreshold: Int32 = 64 << 10

    /// Call once, before the filter holds anything. Fixing the threshold also stops glibc from raising it.
    static func mapSeparately() {
        #if canImport(Glibc)
            _ = mallopt(M_MMAP_THRESHOLD, mappedThreshold)
        #endif
    }
}
