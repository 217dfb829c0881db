/// Reads one campaign or result file: a path, or `-` for standard input, decompressed through `gzip -dc` when the
/// name ends in `.gz` or the data starts with the gzip magic bytes `1f 8b`.
///
/// Detection never loses a byte: a seekable file is peeked with pread(2); from a pipe the first two bytes are
/// read, kept, and handed back first (or replayed into gzip's input).
public final class FileByteSource: ByteSource {
    /// The path as given.
    public let path: String
    /// Whether the data goes through `gzip -dc`.
    public let isCompressed: Bool

    private let file: POSIXFile
    /// The file as opened: the same as `file`, or gzip's input (kept open to read its position).
    private let input: POSIXFile
    private var prefix: [UInt8]
    private var gzip: GzipProcess?
    private var finished = false

    private static let gzipMagic: [UInt8] = [0x1F, 0x8B]

    /// Opens `path` (`-` is standard input).
    public init(path: String) throws(PipelineError) {
        self.path = path
        let input = path == "-" ? POSIXFile.standardInput() : try POSIXFile.openForReading(path)
        self.input = input
        let namedGzip = path.hasSuffix(".gz")
        if let peeked = input.peekAtCurrentPosition(count: 2) {
            if namedGzip || peeked == Self.gzipMagic {
                let gzip = try GzipProcess(input: input, replaying: [], path: path)
                self.gzip = gzip
                self.file = gzip.output
                self.isCompressed = true
            } else {
                self.file = input
                self.isCompressed = false
            }
            self.prefix = []
            return
        }
        // A pipe: read the first two bytes for good.
        var head = [UInt8](repeating: 0, count: 2)
        var got = 0
        while got < 2 {
            let n = try input.read(into: &head, at: got, count: 2 - got)
            if n == 0 { break }
            got += n
        }
        head.removeLast(2 - got)
        if namedGzip || head == Self.gzipMagic {
            let gzip = try GzipProcess(input: input, replaying: head, path: path)
            self.gzip = gzip
            self.file = gzip.output
            self.isCompressed = true
            self.prefix = []
        } else {
            self.file = input
            self.isCompressed = false
            self.prefix = head
        }
    }

    /// Bytes of the file consumed so far: its file position, which gzip advances as it reads the compressed
    /// bytes (the child shares the open file). Nil when the input cannot seek (a pipe).
    public var bytesConsumed: Int64? {
        input.currentPosition()
    }

    /// Reads up to `count` bytes at `offset` into `buffer`, returning how many were read; 0 at the end.
    public func read(into buffer: inout [UInt8], at offset: Int, count: Int) throws(PipelineError) -> Int {
        if finished || count == 0 { return 0 }
        if !prefix.isEmpty {
            let n = min(count, prefix.count)
            buffer.replaceSubrange(offset..<(offset + n), with: prefix[0..<n])
            prefix.removeFirst(n)
            return n
        }
        let n = try file.read(into: &buffer, at: offset, count: count)
        if n == 0 {
            finished = true
            try gzip?.finish()  // a corrupt or truncated stream is an error, not a silent short file
        }
        return n
    }
}

// MARK: - ByteSource

/// Where a reader gets its bytes: a file, standard input, a gzip child's output, or memory in tests. Readers pull
/// chunks into a buffer they own and reuse, so nothing here allocates per read.
public protocol ByteSource: AnyObject {
    /// Reads at most `count` bytes into `buffer[offset ..< offset + count]` and returns how many; 0 means the end.
    func read(into buffer: inout [UInt8], at offset: Int, count: Int) throws(PipelineError) -> Int
}
