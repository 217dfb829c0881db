import Foundation

/// Owns a `gzip -dc` child process that decompresses one input: its standard input is the input file's
/// descriptor, its standard output a pipe the reader reads from. No compression library is linked.
///
/// When detection had to consume the first bytes of a pipe, the child is `sh -c '{ printf …; cat; } | gzip -dc'`
/// so that those bytes are replayed ahead of the rest of the stream.
final class GzipProcess {
    /// The read end of the child's standard output (owned by `outputPipe`).
    let output: POSIXFile
    private let process: Process
    private let outputPipe: Pipe
    private let errorPipe: Pipe
    private let path: String
    private var finished = false

    init(input: POSIXFile, replaying prefix: [UInt8], path: String) throws(PipelineError) {
        self.path = path
        process = Process()
        if prefix.isEmpty {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["gzip", "-dc"]
        } else {
            let octal = prefix.map { "\\" + String($0, radix: 8) }.joined()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "{ printf '\(octal)'; cat; } | gzip -dc"]
        }
        process.standardInput = FileHandle(fileDescriptor: input.descriptor, closeOnDealloc: false)
        outputPipe = Pipe()
        errorPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        do {
            try process.run()
        } catch {
            throw PipelineError(.gzipFailed, "\(path): cannot start gzip: \(error)")
        }
        output = POSIXFile.borrowing(outputPipe.fileHandleForReading.fileDescriptor, path: path)
    }

    deinit {
        if !finished, process.isRunning { process.terminate() }
    }

    /// Called at the end of the output: waits for the child and fails if gzip reported an error (a corrupt or
    /// truncated stream). gzip's exit status 2 is a warning (for example trailing zeros) and is accepted.
    func finish() throws(PipelineError) {
        guard !finished else { return }
        finished = true
        let message = errorPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let status = process.terminationStatus
        guard process.terminationReason == .exit, status == 0 || status == 2 else {
            let text = String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw PipelineError(
                .gzipFailed, "\(path): gzip exited with status \(status)\(text.isEmpty ? "" : ": \(text)")")
        }
    }
}
