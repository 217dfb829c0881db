import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Owns how the tool's own text reaches standard error and standard output: whole, with write(2), and never a trap
/// when the reader went away. The process ignores SIGPIPE (the event loop's sockets need it), so a closed pipe
/// (`send … --results - 2>&1 | head -1`) makes a write fail with EPIPE, which `FileHandle.write(_:)` turns into a
/// crash (SIGILL); here the text is dropped and the run ends as it would have.
enum StandardStream {
    /// Writes `text` to standard error; a failed write drops it.
    static func error(_ text: String) {
        _ = write(text, to: STDERR_FILENO)
    }

    /// Writes `text` to standard output; false if it could not be written whole (a closed pipe).
    @discardableResult
    static func output(_ text: String) -> Bool {
        write(text, to: STDOUT_FILENO)
    }

    private static func write(_ text: String, to descriptor: Int32) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}
