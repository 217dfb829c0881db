import APNSPipeline

/// A `ByteSource` over bytes in memory, handing them out at most `chunkSize` at a time so tests can put chunk
/// boundaries anywhere (inside a `\r\n`, a quoted CSV field, a UTF-8 sequence).
public final class MemoryByteSource: ByteSource {
    private let bytes: [UInt8]
    private let chunkSize: Int
    private var position = 0

    public init(_ bytes: [UInt8], chunkSize: Int = Int.max) {
        self.bytes = bytes
        self.chunkSize = max(1, chunkSize)
    }

    public convenience init(_ text: String, chunkSize: Int = Int.max) {
        self.init(Array(text.utf8), chunkSize: chunkSize)
    }

    public func read(into buffer: inout [UInt8], at offset: Int, count: Int) throws(PipelineError) -> Int {
        let n = min(count, chunkSize, bytes.count - position)
        guard n > 0 else { return 0 }
        buffer.replaceSubrange(offset..<(offset + n), with: bytes[position..<(position + n)])
        position += n
        return n
    }
}
