/// What a crashed or killed run had done, from its result file and its journal, so `send --resume` can finish
/// it: every record ends with exactly one final result line, and nothing already answered is sent again.
///
/// Per record, keyed by (input file index, line):
/// - `.finished`: it has a final result line (any outcome) — skip it;
/// - `.inDoubt`: the journal's last word on it is `s` (sent) and it has no result line — it may have been
///   delivered; report it in doubt (resend only when asked);
/// - `.resend`: the journal's last word is `r` (answered retryable) — safe to send again;
/// - `.fresh`: neither file mentions it — never sent.
///
/// It also counts the journal's `s` lines per record (the attempts an in-doubt line reports, at most 255), and the
/// final lines by outcome and reason (`earlierRuns`), so a resumed run can report on the whole campaign.
///
/// Memory: one open-addressing table of 64-bit entries (`fileIndex << 40 | line` in 54 bits, then 8 bits of `s`
/// count and 2 state bits), 8 bytes a table cell at a load factor of at most 3/4: 11 to 21 bytes per record mentioned
/// (ten million records: 128 or 256 MiB of table cells, depending on where the table last doubled). At most
/// `maximumInputs` input files.
///
/// Torn last lines of either file are tolerated (the record they were about is simply not finished): a last line
/// without its `\n` counts as torn even when it parses, matching `AppendOnlyFile`, which cuts it off when the
/// resumed run reopens the file.
public struct ResumeState: Sendable {
    /// Input files a resumable run may have (14 bits of the key).
    public static let maximumInputs = 1 << 14
    private static let keyMask: UInt64 = (1 << 54) - 1
    private static let stateMask: UInt64 = 3 << 62
    private static let sendsShift: UInt64 = 54
    private static let sendsMask: UInt64 = 0xFF << 54
    private static let sentBits: UInt64 = 1 << 62
    private static let retryableBits: UInt64 = 2 << 62
    private static let finishedBits: UInt64 = 3 << 62

    private var table = PackedUInt64Table(keyMask: ResumeState.keyMask)
    /// The line number of a torn last line in the result file, if there was one.
    public private(set) var tornResultLine: Int?
    /// The line number of a torn last line in the journal, if there was one.
    public private(set) var tornJournalLine: Int?
    /// Records with a final result line.
    public private(set) var finishedCount = 0
    /// The final result lines already written, by outcome and reason (the first line of each record).
    public private(set) var earlierRuns = CampaignTally()
    /// Journal entries read.
    public private(set) var journalEntryCount = 0

    /// An empty state: every record is fresh.
    public init() {}

    /// Loads a result file and its journal (either may be missing). `inputs` are the run's input paths as given
    /// on the command line, in order; a result line naming another file is an error (the resumed run must be
    /// given the same inputs).
    public init(resultsPath: String, journalPath: String?, inputs: [String]) throws(PipelineError) {
        guard inputs.count <= Self.maximumInputs else {
            throw PipelineError(
                .inputsInvalid, "a resumable run takes at most \(Self.maximumInputs) input files, not \(inputs.count)")
        }
        if let results = try Self.openIfPresent(resultsPath) {
            let reader = try ResultReader(
                source: results, name: resultsPath, inputFiles: InputFileList(inputs), strictLastLine: true)
            while let record = try reader.next() {
                guard record.key.fileIndex < inputs.count else {
                    let file = reader.inputFiles.path(at: record.key.fileIndex)
                    throw PipelineError(
                        .inputsInvalid, "\(resultsPath) has results for '\(file)', which is not among this run's inputs"
                    )
                }
                if markFinished(record.key) {
                    earlierRuns.add(outcome: record.outcome, reason: record.reason)
                }
            }
            tornResultLine = reader.tornLine
        }
        if let journalPath, let journal = try Self.openIfPresent(journalPath) {
            var state = self
            tornJournalLine = try SendJournal.read(source: journal, name: journalPath) { entry throws(PipelineError) in
                guard entry.fileIndex < inputs.count else {
                    throw PipelineError(
                        .journalLineInvalid,
                        "\(journalPath): file index \(entry.fileIndex) is beyond the \(inputs.count) inputs")
                }
                state.note(entry)
            }
            table = state.table
            journalEntryCount = state.journalEntryCount
        }
    }

    /// Records a final result line; returns whether it is the record's first.
    @discardableResult
    public mutating func markFinished(_ record: RecordKey) -> Bool {
        let key = Self.key(record)
        let previous = table.entry(forKey: key)
        let sends = previous.map { $0 & Self.sendsMask } ?? 0
        table.store(key | sends | Self.finishedBits)
        guard previous.map({ $0 & Self.stateMask }) != Self.finishedBits else { return false }
        finishedCount += 1
        return true
    }

    /// Records one journal entry (a final result line always wins over the journal).
    public mutating func note(_ entry: SendJournal.Entry) {
        journalEntryCount += 1
        let key = Self.key(RecordKey(fileIndex: entry.fileIndex, line: entry.line))
        let existing = table.entry(forKey: key)
        if let existing, existing & Self.stateMask == Self.finishedBits { return }
        var sends = (existing ?? 0) & Self.sendsMask
        if entry.kind == .sent, sends != Self.sendsMask { sends += 1 << Self.sendsShift }
        table.store(key | sends | (entry.kind == .sent ? Self.sentBits : Self.retryableBits))
    }

    /// How often the journal says a record was sent (its `s` lines, at most 255).
    public func sends(_ record: RecordKey) -> Int {
        guard let entry = table.entry(forKey: Self.key(record)) else { return 0 }
        return Int((entry & Self.sendsMask) >> Self.sendsShift)
    }

    /// Whether the files record nothing at all: no final line and no journal entry (a run that never started).
    public var recordsNothing: Bool { table.count == 0 && journalEntryCount == 0 }

    /// What the earlier run knew of a record.
    public func status(_ record: RecordKey) -> ResumeStatus {
        guard let entry = table.entry(forKey: Self.key(record)) else { return .fresh }
        switch entry & Self.stateMask {
        case Self.finishedBits: return .finished
        case Self.sentBits: return .inDoubt
        default: return .resend
        }
    }

    /// Bytes the state holds.
    public var memoryBytes: Int { table.memoryBytes }

    /// The table key of a record: 14 bits of file index, 40 bits of line (`RecordKey.packed`, cut to 54 bits).
    static func key(_ record: RecordKey) -> UInt64 { record.packed & keyMask }

    private static func openIfPresent(_ path: String) throws(PipelineError) -> FileByteSource? {
        do {
            return try FileByteSource(path: path)
        } catch  where error.kind == .openFailed && !POSIXFile.exists(path) {
            return nil
        }
    }
}
