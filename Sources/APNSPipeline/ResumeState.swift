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
/// Memory: one open-addressing table of 64-bit entries (`fileIndex << 40 | line` plus two state bits in the top
/// bits), 8 bytes a slot at a load factor of at most 3/4: 11 to 21 bytes per record mentioned (ten million
/// records: 128 or 256 MiB of slots, depending on where the table last doubled). Torn last lines of either file
/// are tolerated (the record they were about is simply not finished): a last line without its `\n` counts as
/// torn even when it parses, matching `AppendOnlyFile`, which cuts it off when the resumed run reopens the file.
public struct ResumeState: Sendable {
    private static let keyMask: UInt64 = (1 << 62) - 1
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

    /// An empty state: every record is fresh.
    public init() {}

    /// Loads a result file and its journal (either may be missing). `inputs` are the run's input paths as given
    /// on the command line, in order; a result line naming another file is an error (the resumed run must be
    /// given the same inputs).
    public init(resultsPath: String, journalPath: String?, inputs: [String]) throws(PipelineError) {
        var index: [String: Int] = [:]
        for (position, path) in inputs.enumerated() where index[path] == nil { index[path] = position }
        if let results = try Self.openIfPresent(resultsPath) {
            let reader = try ResultReader(source: results, name: resultsPath, strictLastLine: true)
            while let record = try reader.next() {
                guard let fileIndex = index[record.file] else {
                    throw PipelineError(
                        .inputsInvalid,
                        "\(resultsPath) has results for '\(record.file)', which is not among this run's inputs"
                    )
                }
                markFinished(fileIndex: fileIndex, line: record.line)
            }
            tornResultLine = reader.tornLine
        }
        if let journalPath, let journal = try Self.openIfPresent(journalPath) {
            var state = self
            tornJournalLine = try SendJournal.read(source: journal, name: journalPath) { entry throws(PipelineError) in
                guard entry.fileIndex < inputs.count else {
                    throw PipelineError(.journalLineInvalid, "\(journalPath): file index \(entry.fileIndex) is beyond the \(inputs.count) inputs")
                }
                state.note(entry)
            }
            table = state.table
        }
    }

    /// Records a final result line.
    public mutating func markFinished(fileIndex: Int, line: Int) {
        let previous = table.store(Self.key(fileIndex, line) | Self.finishedBits)
        if previous == nil || previous.map({ $0 & ~Self.keyMask }) != Self.finishedBits { finishedCount += 1 }
    }

    /// Records one journal entry (a final result line always wins over the journal).
    public mutating func note(_ entry: SendJournal.Entry) {
        let key = Self.key(entry.fileIndex, entry.line)
        if let existing = table.entry(forKey: key), existing & ~Self.keyMask == Self.finishedBits { return }
        table.store(key | (entry.kind == .sent ? Self.sentBits : Self.retryableBits))
    }

    /// What the earlier run knew of a record.
    public func status(fileIndex: Int, line: Int) -> ResumeStatus {
        guard let entry = table.entry(forKey: Self.key(fileIndex, line)) else { return .fresh }
        switch entry & ~Self.keyMask {
        case Self.finishedBits: return .finished
        case Self.sentBits: return .inDoubt
        default: return .resend
        }
    }

    /// Bytes the state holds.
    public var memoryBytes: Int { table.memoryBytes }

    /// The key of a record: 22 bits of file index, 40 bits of line (the same packing as `DispatchKey.packed`).
    static func key(_ fileIndex: Int, _ line: Int) -> UInt64 {
        (UInt64(truncatingIfNeeded: fileIndex) << 40 | UInt64(truncatingIfNeeded: line) & 0xFF_FFFF_FFFF) & keyMask
    }

    private static func openIfPresent(_ path: String) throws(PipelineError) -> FileByteSource? {
        do {
            return try FileByteSource(path: path)
        } catch where error.kind == .openFailed && !POSIXFile.exists(path) {
            return nil
        }
    }
}
