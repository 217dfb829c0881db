/// A buffer in front of a byte sink that goes out with one write(2) per `flush()`, and whose first failure is
/// final: the file rolls the failed write back, and every later `flush()` or `synchronize()` throws the same error
/// without writing, so no byte can reach the file twice or after a gap. Shared by `ResultWriter` and `SendJournal`.
final class BufferedOutput {
    /// The bytes waiting for `flush()`.
    @exclusivity(unchecked)
    var bytes: [UInt8] = []
    private let sink: any ByteSink
    /// The file to fdatasync, when the sink is one (not standard output or memory).
    private let file: POSIXFile?
    @exclusivity(unchecked)
    private var failure: PipelineError?

    init(sink: any ByteSink, file: POSIXFile?, reservingCapacity capacity: Int) {
        self.sink = sink
        self.file = file
        bytes.reserveCapacity(capacity)
    }

    /// Writes what is buffered (one write(2), looping only on short writes).
    func flush() throws(PipelineError) {
        if let failure { throw failure }
        guard !bytes.isEmpty else { return }
        do {
            try sink.write(bytes, count: bytes.count)
        } catch {
            failure = error
            throw error
        }
        bytes.removeAll(keepingCapacity: true)
    }

    /// Forces what was flushed to the disk (fdatasync); nothing to do for standard output or memory.
    func synchronize() throws(PipelineError) {
        if let failure { throw failure }
        do {
            try file?.synchronizeData()
        } catch {
            failure = error  // the data may not be on the disk: nothing more is written
            throw error
        }
    }
}

// MARK: - ByteSink

/// Where a writer's bytes go: a file (appended with write(2)), standard output, or memory in tests.
public protocol ByteSink: AnyObject {
    /// Writes `bytes[0..<count]` completely.
    func write(_ bytes: [UInt8], count: Int) throws(PipelineError)
}

extension POSIXFile: ByteSink {}
