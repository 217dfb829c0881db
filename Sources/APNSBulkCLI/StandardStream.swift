import Foundation

/// Owns how the tool's own text reaches standard error and standard output: whole, and never a trap when the
/// reader went away. The process ignores SIGPIPE (the event loop's sockets need it), so a closed pipe
/// (`send … --results - 2>&1 | head -1`) makes a write fail with EPIPE, which `FileHandle.write(_:)` turns into a
/// crash (SIGILL); the throwing `write(contentsOf:)` reports it instead, and the text is dropped.
enum StandardStream {
    /// Writes `text` to standard error; a failed write drops it.
    static func error(_ text: String) {
        _ = write(text, to: .standardError)
    }

    /// Writes `text` to standard output; false if it could not be written whole (a closed pipe).
    @discardableResult
    static func output(_ text: String) -> Bool {
        write(text, to: .standardOutput)
    }

    private static func write(_ text: String, to handle: FileHandle) -> Bool {
        do {
            try handle.write(contentsOf: Data(text.utf8))
            return true
        } catch {
            return false
        }
    }
}
