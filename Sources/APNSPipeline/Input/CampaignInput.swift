/// One campaign file of a run: its path (`-` for standard input) and how to read it.
public struct CampaignInput: Sendable, Hashable {
    /// How a campaign file is written.
    public enum Format: String, Sendable, Hashable, CaseIterable {
        /// One JSON object per line.
        case ndjson
        /// RFC 4180 CSV with a header row (fields split at `,`, `;` or a tab: `CSVDelimiter`).
        case csv
    }

    /// The input file's path.
    public var path: String
    /// How the file's records are written.
    public var format: Format

    /// - Parameter format: nil picks by name: `.csv`, `.tsv` (or either `.gz`) is CSV, anything else (and `-`) NDJSON.
    public init(path: String, format: Format? = nil) {
        self.path = path
        self.format = format ?? Self.format(forPath: path)
    }

    /// Whether the input can be read only once, in order: standard input (`-`), or a path that names a pipe, a FIFO
    /// or a device (`<(zcat c.gz)`, `/dev/stdin`). Such an input is not fingerprinted and not opened ahead of its
    /// turn: either would consume what the run is to send.
    public var isStream: Bool { path == "-" || POSIXFile.isStream(atPath: path) }

    /// The format a file name suggests.
    public static func format(forPath path: String) -> Format {
        let lowered = path.lowercased()
        let csv = [".csv", ".csv.gz", ".tsv", ".tsv.gz"]
        return csv.contains { lowered.hasSuffix($0) } ? .csv : .ndjson
    }
}

/// How a run reads its campaign files.
public struct CampaignReaderOptions: Sendable {
    /// The longest record accepted unless `--max-record-bytes` says otherwise: 64 KiB.
    public static let defaultMaximumRecordLength = 64 * 1024

    /// The settings for records that leave them out.
    public var defaults: CampaignDefaults
    /// The payload template (`--template`): fills CSV rows and NDJSON records that have `vars` and no payload.
    public var template: PayloadTemplate?
    /// Which records this process handles (`--shard K/N`).
    public var shard: ShardSelector
    /// The longest NDJSON line or CSV record accepted, in bytes.
    public var maximumRecordLength: Int
    /// The CSV column that holds the device token.
    public var tokenColumn: String
    /// The CSV delimiter (`--csv-delimiter`); nil detects it per file from its header row.
    public var csvDelimiter: CSVDelimiter?
    /// Whether valid records carry their payload's bytes. `validate` checks every payload exactly as `send` does
    /// but sends nothing, so it sets this to false: its records then hold an empty payload and skip a copy each.
    public var keepsPayloads = true
    /// The record fields each result line carries (`--keep`); nil keeps none.
    public var keep: KeptFields?

    /// An input from its path, format and settings.
    public init(
        defaults: CampaignDefaults,
        template: PayloadTemplate? = nil,
        shard: ShardSelector = .all,
        maximumRecordLength: Int = CampaignReaderOptions.defaultMaximumRecordLength,
        tokenColumn: String = "token"
    ) {
        self.defaults = defaults
        self.template = template
        self.shard = shard
        self.maximumRecordLength = maximumRecordLength
        self.tokenColumn = tokenColumn
    }
}
