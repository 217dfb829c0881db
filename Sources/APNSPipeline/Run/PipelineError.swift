import APNSCore

/// A failure that stops reading or writing a whole file (as opposed to an `InputError`, which rejects one record):
/// a file that cannot be opened, a read or write that fails, a gzip stream that is corrupt, a CSV header without
/// a token column, an invalid template, a result or journal file with a bad line in the middle, a bad `--shard`,
/// a result file in use by another run, an unfinished run that needs `--resume`, a result file that belongs to
/// another campaign, a campaign with no records or without a setting every record needs, an output file refused.
///
/// A kind and a detail; compare with the static kinds (`error.kind == .csvHeaderInvalid`) and show `description`,
/// which names the file and, where it applies, the line.
public struct PipelineError: KindedError, Hashable, Sendable {
    /// What went wrong, without the detail text; compare errors by kind (the kinds are below).
    public typealias Kind = ErrorKind<PipelineError>

    /// The kind of failure.
    public let kind: Kind
    /// The specifics: the path, the line, `strerror`, gzip's own message; one printable line (quoted input has its
    /// control characters escaped, `PrintableText`).
    public let detail: String

    /// A failure of `kind`; `detail` is escaped for a terminal.
    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = PrintableText.escaping(detail)
    }
}

extension ErrorKind where Owner == PipelineError {
    /// A file (input, result, journal, report) could not be opened or created.
    public static let openFailed = Self("cannot open file")
    /// Reading an open file failed.
    public static let readFailed = Self("read failed")
    /// Writing to an output file failed (disk full, I/O error).
    public static let writeFailed = Self("write failed")
    /// A gzip-compressed input is corrupt or truncated.
    public static let gzipFailed = Self("gzip decompression failed")
    /// A CSV header has no token column or cannot be used otherwise.
    public static let csvHeaderInvalid = Self("CSV header unusable")
    /// The payload template is too large or does not parse (a `{{` never closed, …).
    public static let templateInvalid = Self("payload template invalid")
    /// A result file has a line that does not parse, other than a torn last line.
    public static let resultLineInvalid = Self("result file line invalid")
    /// A send journal has a line that does not parse, other than a torn last line.
    public static let journalLineInvalid = Self("journal line invalid")
    /// The `--shard` index or count is out of range.
    public static let shardInvalid = Self("shard invalid")
    /// The input files do not fit the run: too many for a resumable run, or not the ones the result file names.
    public static let inputsInvalid = Self("input files invalid")
    /// The result file is locked by another run.
    public static let runLocked = Self("result file in use")
    /// The result file holds an unfinished run that needs `--resume` to continue.
    public static let unfinishedRun = Self("unfinished run")
    /// The result file was written for a campaign with different inputs or settings.
    public static let campaignChanged = Self("result file belongs to another campaign")
    /// The campaign record beside a result file (`<results>.campaign`) is not one apns-bulk wrote.
    public static let campaignRecordInvalid = Self("campaign record invalid")
    /// The campaign's inputs hold no records to send.
    public static let campaignEmpty = Self("campaign has no records")
    /// A setting every record needs (such as the topic) is neither in the records nor in the defaults.
    public static let campaignSettingMissing = Self("campaign setting missing")
    /// An output path is refused: it is an input, a directory, or another output.
    public static let outputInvalid = Self("output file refused")

    /// Whether the command line itself is wrong for the files it names (exit status 64, like a bad option
    /// value): a result file that belongs to another campaign, a setting every record needs and none has, an
    /// output that names an input, a directory or a file that is not a result file (`OutputPathCheck`).
    public var isUsageError: Bool {
        self == .campaignChanged || self == .campaignSettingMissing || self == .outputInvalid
    }
}
