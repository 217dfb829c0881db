/// How far a run has read its campaign files: bytes consumed over the total size of the inputs (for a `.gz`
/// input, compressed bytes over the compressed size). Only known when every input is a regular file.
public struct ReadProgress: Sendable, Equatable {
    public var bytesRead: Int64
    public var bytesTotal: Int64

    public init(bytesRead: Int64, bytesTotal: Int64) {
        self.bytesRead = bytesRead
        self.bytesTotal = bytesTotal
    }

    /// 0 ... 1; 1 for empty inputs.
    public var fraction: Double {
        bytesTotal > 0 ? min(1, max(0, Double(bytesRead) / Double(bytesTotal))) : 1
    }
}

extension RecordReader {
    /// Readers that cannot say how far they are (result files being replayed, tests) report nothing.
    public var readProgress: ReadProgress? { nil }
}
