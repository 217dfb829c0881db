import APNSCore

/// The sidecar `<results>.journal` that makes `send --resume` exact after a crash: the dispatcher appends to it
/// before a batch of requests leaves, with one write(2) per batch. Like `ResultWriter`, a failed write ends it
/// (the file rolls the batch back, so the journal never names requests that did not leave).
///
/// Lines are text: `s <file index> <line>` (the record is being sent) and `r <file index> <line>` (it was
/// answered with a retryable failure: safe to send again). With the result file, `ResumeState` tells records
/// that are done, in doubt (sent, never answered), safe to resend, or never sent. A run reading a stream adds the
/// sent notification's `SentDigest` to its `s` lines (`s <file index> <line> <16 hex digits>`), so a run continuing
/// it can tell the same stream from another (`ContinuedStream`); a line without one is simply not checked.
public final class SendJournal {
    /// The journal that goes with a result file.
    public static func path(forResults resultsPath: String) -> String { resultsPath + ".journal" }
    /// The longest journal line read back: `s`/`r`, two integers and spaces, with room to spare.
    static let maximumLineLength = 256

    private let output: BufferedOutput
    /// Bytes of a torn last line that opening in `.append` mode cut off.
    public let droppedTornBytes: Int

    /// A journal writing to `sink`.
    public init(sink: any ByteSink) {
        output = BufferedOutput(sink: sink, file: nil, reservingCapacity: 16 * 1024)
        droppedTornBytes = 0
    }

    /// The journal of a run whose results go to standard output (`--results -`): no later run can continue it, so
    /// it keeps no file (nothing is left beside the working directory); its lines are dropped.
    public static func keepingNothing() -> SendJournal { SendJournal(sink: DroppedBytes()) }

    /// Opens the journal file: `.create` for a new run, `.append` to continue one.
    public init(path: String, mode: AppendOnlyFile.Mode) throws(PipelineError) {
        let opened = try AppendOnlyFile.open(path, mode: mode)
        output = BufferedOutput(
            sink: opened.file, file: path == "-" ? nil : opened.file, reservingCapacity: 16 * 1024)
        droppedTornBytes = opened.droppedTornBytes
    }

    /// Notes that a record is about to be sent (buffered until `flush()`).
    public func recordSent(fileIndex: Int, line: Int) {
        append(UInt8(ascii: "s"), fileIndex, line)
    }

    /// Notes that a record is about to be sent, with the digest of what is sent (buffered until `flush()`).
    public func recordSent(fileIndex: Int, line: Int, digest: UInt64) {
        append(UInt8(ascii: "s"), fileIndex, line)
        output.bytes.removeLast()  // the line end: the digest goes before it
        output.bytes.append(UInt8(ascii: " "))
        for shift in stride(from: 60, through: 0, by: -4) {
            output.bytes.append(Self.hexDigits[Int(truncatingIfNeeded: (digest >> UInt64(shift)) & 0xF)])
        }
        output.bytes.append(UInt8(ascii: "\n"))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Notes that a record was answered with a retryable failure (buffered until `flush()`).
    public func recordRetryable(fileIndex: Int, line: Int) {
        append(UInt8(ascii: "r"), fileIndex, line)
    }

    /// Writes what is buffered: call it before the batch's requests are flushed to the network.
    public func flush() throws(PipelineError) { try output.flush() }

    /// Forces what was flushed to the disk (fdatasync).
    public func synchronize() throws(PipelineError) { try output.synchronize() }

    /// Bytes waiting for `flush()`.
    public var bufferedByteCount: Int { output.bytes.count }

    private func append(_ kind: UInt8, _ fileIndex: Int, _ line: Int) {
        output.bytes.append(kind)
        output.bytes.append(UInt8(ascii: " "))
        DecimalText.append(fileIndex, to: &output.bytes)
        output.bytes.append(UInt8(ascii: " "))
        DecimalText.append(line, to: &output.bytes)
        output.bytes.append(UInt8(ascii: "\n"))
    }

    /// One journal line.
    public struct Entry: Hashable, Sendable {
        /// Sent, or answered retryable.
        public enum Kind: Hashable, Sendable {
            case sent
            case retryable
        }

        /// What the line records.
        public let kind: Kind
        /// The input file's zero-based index.
        public let fileIndex: Int
        /// The record's line in that file.
        public let line: Int
        /// The sent notification's `SentDigest`, on `s` lines that carry one.
        public var digest: UInt64? = nil
    }

    /// Reads a journal, calling `body` per entry in order. A last line without its `\n` is torn (skipped, its
    /// number returned), whatever it holds; any other bad line is an error.
    @discardableResult
    public static func read(
        source: any ByteSource, name: String, _ body: (Entry) throws(PipelineError) -> Void
    ) throws(PipelineError) -> Int? {
        let lines = LineReader(source: source, maximumLineLength: Self.maximumLineLength)
        while let line = try lines.next() {
            // A last line without its end may be cut inside a number ("s 0 12" → "s 0 1"): never trust it.
            if !line.isTerminated { return line.number }
            guard !line.isTooLong, let entry = parse(lines.buffer[line.range]) else {
                throw PipelineError(.journalLineInvalid, "\(name):\(line.number): not 's|r <file> <line> [<digest>]'")
            }
            try body(entry)
        }
        return nil
    }

    private static func parse(_ bytes: ArraySlice<UInt8>) -> Entry? {
        let parts = bytes.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 4, parts[0].count == 1,
            let fileIndex = NotificationHeaderBuilder.smallInteger(parts[1], maximumDigits: 9),
            let line = NotificationHeaderBuilder.smallInteger(parts[2], maximumDigits: 13), line >= 1
        else { return nil }
        var digest: UInt64?
        if parts.count == 4 {
            guard parts[0].first == UInt8(ascii: "s"), parts[3].count == 16,
                let value = UInt64(String(decoding: parts[3], as: UTF8.self), radix: 16)
            else { return nil }
            digest = value
        }
        switch parts[0].first {
        case UInt8(ascii: "s")?: return Entry(kind: .sent, fileIndex: Int(fileIndex), line: Int(line), digest: digest)
        case UInt8(ascii: "r")?: return Entry(kind: .retryable, fileIndex: Int(fileIndex), line: Int(line))
        default: return nil
        }
    }
}

// MARK: - DroppedBytes

/// A sink that keeps nothing: the journal of a run written to standard output.
private final class DroppedBytes: ByteSink {
    func write(_ bytes: [UInt8], count: Int) throws(PipelineError) {}
}
