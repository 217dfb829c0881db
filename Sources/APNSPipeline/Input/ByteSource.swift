/// Where a reader gets its bytes: a file, standard input, a gzip child's output, or memory in tests. Readers pull
/// chunks into a buffer they own and reuse, so nothing here allocates per read.
public protocol ByteSource: AnyObject {
    /// Reads at most `count` bytes into `buffer[offset ..< offset + count]` and returns how many; 0 means the end.
    func read(into buffer: inout [UInt8], at offset: Int, count: Int) throws(PipelineError) -> Int
}
