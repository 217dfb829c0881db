import APNSCore

/// Splits a byte stream into lines with 1-based line numbers, in one fixed buffer that is allocated once and
/// never grows: memory does not depend on the file's length or on how long its lines are.
///
/// A line ends at `\n`; a `\r` before it is dropped; a last line without a newline is still a line. A line longer
/// than `maximumLineLength` (not counting its terminator) comes back as `isTooLong` with an empty range, and the
/// reader skips to the next newline without keeping the rest.
///
/// A line's bytes are `buffer[line.range]`, valid until the next call to `next()`. Do not keep a copy of `buffer`
/// (or a `JSONScanner` over it) across calls: the next read would then copy the whole buffer.
public final class LineReader {
    /// One line: its number and where its bytes are in `buffer`.
    public struct Line: Hashable, Sendable {
        /// The 1-based line number in the input.
        public let number: Int
        /// The line's bytes in `buffer`, without `\r\n` or `\n`; empty when `isTooLong`.
        public let range: Range<Int>
        /// The line was longer than `maximumLineLength`; its bytes were skipped.
        public let isTooLong: Bool
        /// Whether a `\n` ended the line (false only for a last line the input ends inside).
        public let isTerminated: Bool
    }

    /// Bytes read from the source at a time (also `CSVReader`'s).
    public static let defaultChunkSize = 256 * 1024

    /// The longest line accepted, in bytes.
    public let maximumLineLength: Int
    /// The reader's buffer; its size is fixed at `maximumLineLength + 2 + chunkSize`.
    public var buffer: [UInt8] { window.bytes }

    /// The buffer; `window.start` is where the unfinished line starts.
    @exclusivity(unchecked)
    private var window: ByteWindow
    @exclusivity(unchecked)
    private var scanFrom = 0
    @exclusivity(unchecked)
    private var lineNumber = 0
    @exclusivity(unchecked)
    private var skipping = false

    /// A reader of lines from `source`.
    public init(
        source: any ByteSource,
        maximumLineLength: Int = CampaignReaderOptions.defaultMaximumRecordLength,
        chunkSize: Int = LineReader.defaultChunkSize
    ) {
        self.maximumLineLength = max(1, maximumLineLength)
        self.window = ByteWindow(source: source, capacity: self.maximumLineLength + 2 + max(1, chunkSize))
    }

    /// Bytes read from the source that no line returned yet holds: how far behind the source's position the
    /// lines handed out are (for `CampaignReader.readProgress`).
    public var bytesAhead: Int { window.unusedCount }

    /// The next line, or nil at the end of the input.
    public func next() throws(PipelineError) -> Line? {
        while true {
            if skipping {
                // Inside a line that is too long: drop bytes up to its newline, then report it.
                if let newline = firstNewline(from: window.start) {
                    window.start = newline + 1
                    scanFrom = window.start
                    skipping = false
                    return Line(number: lineNumber, range: 0..<0, isTooLong: true, isTerminated: true)
                }
                window.discard()
                scanFrom = 0
                if window.atEnd {
                    skipping = false
                    return Line(number: lineNumber, range: 0..<0, isTooLong: true, isTerminated: false)
                }
                try refill()
                continue
            }
            if let newline = firstNewline(from: scanFrom) {
                let line = makeLine(window.start..<newline, terminated: true)
                window.start = newline + 1
                scanFrom = window.start
                return line
            }
            scanFrom = window.end
            if window.end - window.start > maximumLineLength + 1 {
                // Longer than any line can be even with a trailing "\r": drop what is buffered, skip the rest.
                lineNumber += 1
                skipping = true
                window.start = window.end
                continue
            }
            if window.atEnd {
                guard window.start < window.end else { return nil }
                let line = makeLine(window.start..<window.end, terminated: false)
                window.start = window.end
                scanFrom = window.end
                return line
            }
            try refill()
        }
    }

    private func makeLine(_ raw: Range<Int>, terminated: Bool) -> Line {
        lineNumber += 1
        var upper = raw.upperBound
        if upper > raw.lowerBound, window.bytes[upper - 1] == UInt8(ascii: "\r") { upper -= 1 }
        guard upper - raw.lowerBound <= maximumLineLength else {
            return Line(number: lineNumber, range: 0..<0, isTooLong: true, isTerminated: terminated)
        }
        return Line(number: lineNumber, range: raw.lowerBound..<upper, isTooLong: false, isTerminated: terminated)
    }

    @inline(__always)
    private func firstNewline(from index: Int) -> Int? {
        index < window.end
            ? ByteSearch.firstIndex(of: UInt8(ascii: "\n"), in: window.bytes, range: index..<window.end) : nil
    }

    /// Moves the unfinished line to the front and reads more after it.
    private func refill() throws(PipelineError) {
        scanFrom -= try window.refill()
    }
}
