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
    public static let openFailed = Self("cannot open file")
    public static let readFailed = Self("read failed")
    public static let writeFailed = Self("write failed")
    public static let gzipFailed = Self("gzip decompression failed")
    public static let csvHeaderInvalid = Self("CSV header unusable")
    public static let templateInvalid = Self("payload template invalid")
    public static let resultLineInvalid = Self("result file line invalid")
    public static let journalLineInvalid = Self("journal line invalid")
    public static let shardInvalid = Self("shard invalid")
    public static let inputsInvalid = Self("input files invalid")
    public static let runLocked = Self("result file in use")
    public static let unfinishedRun = Self("unfinished run")
    public static let campaignChanged = Self("result file belongs to another campaign")
    public static let campaignRecordInvalid = Self("campaign record invalid")
    public static let campaignEmpty = Self("campaign has no records")
    public static let campaignSettingMissing = Self("campaign setting missing")
    public static let outputInvalid = Self("output file refused")

    /// Whether the command line itself is wrong for the files it names (exit status 64, like a bad option
    /// value): a result file that belongs to another campaign, a setting every record needs and none has, an
    /// output that names an input, a directory or a file that is not a result file (`OutputPathCheck`).
    public var isUsageError: Bool {
        self == .campaignChanged || self == .campaignSettingMissing || self == .outputInvalid
    }
}
