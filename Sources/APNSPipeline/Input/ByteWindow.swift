/// A fixed buffer of the bytes read from a `ByteSource`: the bytes not yet used are `bytes[start..<end]`, and
/// `refill` moves them to the front and reads more after them. The one chunk-reading loop of `LineReader` and
/// `CSVReader`; the buffer is allocated once and never grows.
struct ByteWindow {
    private let source: any ByteSource
    /// The buffer; only `start..<end` holds bytes still to be used.
    private(set) var bytes: [UInt8]
    /// The first byte not yet used.
    var start = 0
    /// One past the last byte read.
    private(set) var end = 0
    /// Whether the source has ended (a read returned no bytes).
    private(set) var atEnd = false

    init(source: any ByteSource, capacity: Int) {
        self.source = source
        bytes = [UInt8](repeating: 0, count: capacity)
    }

    /// Whether every byte read has been used.
    var isEmpty: Bool { start == end }

    /// Bytes read from the source and not used yet.
    var unusedCount: Int { end - start }

    /// Drops every byte read but not used.
    mutating func discard() {
        start = 0
        end = 0
    }

    /// Moves the bytes not yet used to the front and reads more after them, as much as fits; nothing once the
    /// source has ended. Returns how many places the unused bytes moved back, for indexes kept into them.
    @discardableResult
    mutating func refill() throws(PipelineError) -> Int {
        guard !atEnd else { return 0 }
        let shift = start
        if shift > 0 {
            let pending = end - shift
            for index in 0..<pending { bytes[index] = bytes[shift + index] }
            start = 0
            end = pending
        }
        let n = try source.read(into: &bytes, at: end, count: bytes.count - end)
        if n == 0 { atEnd = true } else { end += n }
        return shift
    }
}
