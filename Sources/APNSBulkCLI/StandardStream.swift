import APNSCore
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

    /// Writes the tool's one error line: `apns-bulk: error: ` and `message` in the tool's voice (`errorLine`).
    static func error(message: String) {
        error(errorLine(message) + "\n")
    }

    /// `apns-bulk: error: ` and `message`, escaped for a terminal, its first word in lower case when it is a plain
    /// capitalised word ("Missing --key" reads "missing --key"; names such as `APNs`, `TLS` or `--key` are kept).
    static func errorLine(_ message: String) -> String {
        var text = message.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
        let firstWord = text.prefix { $0.isLetter }
        // A word followed by a space; "Cert.pem: …" or "Users/…" name a file and keep their case.
        let isWord = text.dropFirst(firstWord.count).first == " "
        if isWord, firstWord.count > 1, let first = firstWord.first, first.isUppercase,
            firstWord.dropFirst().allSatisfy(\.isLowercase)
        {
            text = first.lowercased() + text.dropFirst()
        }
        return "apns-bulk: error: " + PrintableText.escaping(text)
    }

    /// Writes `text` to standard output; false if it could not be written whole (a closed pipe).
    @discardableResult
    static func output(_ text: String) -> Bool {
        write(text, to: .standardOutput)
    }

    /// Writes `bytes` to standard output; false if they could not be written whole (a closed pipe).
    static func output(bytes: ArraySlice<UInt8>) -> Bool {
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(bytes))
            return true
        } catch {
            return false
        }
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
