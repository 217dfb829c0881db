import APNSPipeline

/// A `ByteSink` that keeps everything in memory, for tests.
public final class MemoryByteSink: ByteSink {
    public private(set) var bytes: [UInt8] = []
    /// How many writes it received (to check batching).
    public private(set) var writeCount = 0

    public init() {}

    public func write(_ bytes: [UInt8], count: Int) throws(PipelineError) {
        self.bytes.append(contentsOf: bytes[0..<count])
        writeCount += 1
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
