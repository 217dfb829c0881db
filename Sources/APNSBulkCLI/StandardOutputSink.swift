import APNSPipeline
import Foundation

/// Standard output as a `ByteSink`, for commands that print data (`prune`).
final class StandardOutputSink: ByteSink {
    func write(_ bytes: [UInt8], count: Int) throws(PipelineError) {
        FileHandle.standardOutput.write(Data(bytes[0..<count]))
    }
}
