import APNSCore

/// A failure that stops reading or writing a whole file (as opposed to an `InputError`, which rejects one record):
/// a file that cannot be opened, a read or write that fails, a gzip stream that is corrupt, a CSV header without
/// a token column, an invalid template, a result or journal file with a bad line in the middle, a bad `--shard`,
/// a result file in use by another run, an unfinished run that needs `--resume`, a result file that belongs to
/// another campaign, a campaign with no records or without a setting every record needs.
///
/// A struct around a private code; compare with the static kinds (`error.kind == .csvHeaderInvalid`) and show
/// `description`, which names the file and, where it applies, the line.
public struct PipelineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, without the detail text; compare errors by kind.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let code: Code
        fileprivate init(_ code: Code) { self.code = code }
        public var description: String { code.rawValue }

        public static let openFailed = Kind(.openFailed)
        public static let readFailed = Kind(.readFailed)
        public static let writeFailed = Kind(.writeFailed)
        public static let gzipFailed = Kind(.gzipFailed)
        public static let csvHeaderInvalid = Kind(.csvHeaderInvalid)
        public static let templateInvalid = Kind(.templateInvalid)
        public static let resultLineInvalid = Kind(.resultLineInvalid)
        public static let journalLineInvalid = Kind(.journalLineInvalid)
        public static let shardInvalid = Kind(.shardInvalid)
        public static let inputsInvalid = Kind(.inputsInvalid)
        public static let runLocked = Kind(.runLocked)
        public static let unfinishedRun = Kind(.unfinishedRun)
        public static let campaignChanged = Kind(.campaignChanged)
        public static let campaignRecordInvalid = Kind(.campaignRecordInvalid)
        public static let campaignEmpty = Kind(.campaignEmpty)
        public static let campaignSettingMissing = Kind(.campaignSettingMissing)

        /// Whether the command line itself is wrong for the files it names (exit status 64, like a bad option
        /// value): a result file that belongs to another campaign, a setting every record needs and none has.
        public var isUsageError: Bool { self == .campaignChanged || self == .campaignSettingMissing }
    }

    /// The kinds, with their short stable descriptions.
    fileprivate enum Code: String, Hashable, Sendable {
        case openFailed = "cannot open file"
        case readFailed = "read failed"
        case writeFailed = "write failed"
        case gzipFailed = "gzip decompression failed"
        case csvHeaderInvalid = "CSV header unusable"
        case templateInvalid = "payload template invalid"
        case resultLineInvalid = "result file line invalid"
        case journalLineInvalid = "journal line invalid"
        case shardInvalid = "shard invalid"
        case inputsInvalid = "input files invalid"
        case runLocked = "result file in use"
        case unfinishedRun = "unfinished run"
        case campaignChanged = "result file belongs to another campaign"
        case campaignRecordInvalid = "campaign record invalid"
        case campaignEmpty = "campaign has no records"
        case campaignSettingMissing = "campaign setting missing"
    }

    /// The kind of failure.
    public let kind: Kind
    /// The specifics: the path, the line, `strerror`, gzip's own message; one printable line (quoted input has its
    /// control characters escaped, `PrintableText`).
    public let detail: String

    init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = PrintableText.escaping(detail)
    }

    /// `"<kind>: <detail>"`.
    public var description: String { detail.isEmpty ? kind.description : "\(kind.description): \(detail)" }
}
