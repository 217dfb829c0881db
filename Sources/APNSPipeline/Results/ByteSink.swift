/// Where a writer's bytes go: a file (appended with write(2)), standard output, or memory in tests.
public protocol ByteSink: AnyObject {
    /// Writes `bytes[0..<count]` completely.
    func write(_ bytes: [UInt8], count: Int) throws(PipelineError)
}

extension POSIXFile: ByteSink {}
