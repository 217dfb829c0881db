/// Parses a proxy's answer to CONNECT, fed in chunks as they arrive: a pure state machine (no I/O). Reads only
/// up to the end of the header block, and says how many bytes of the last chunk belonged to it, so not one byte
/// of the tunnelled stream is consumed. The header block is bounded (`maximumHeaderBytes`).
public struct ProxyResponseParser: Sendable {
    /// What to do after a chunk.
    public enum Action: Equatable, Sendable {
        /// The header is not complete: all of the chunk was consumed, feed more.
        case needMoreBytes
        /// A 2xx status: the tunnel is open. `consumed` bytes of this chunk were header; the rest is tunnel data.
        case established(consumed: Int)
        /// A non-2xx status (407: authentication required, 403, 502, …).
        case refused(status: Int, reason: String)
        /// Not an HTTP/1.x response, or too large.
        case invalid(String)
    }

    public static let defaultMaximumHeaderBytes = 16 * 1024

    public let maximumHeaderBytes: Int
    private var header: [UInt8] = []
    private var finished = false

    public init(maximumHeaderBytes: Int = ProxyResponseParser.defaultMaximumHeaderBytes) {
        self.maximumHeaderBytes = maximumHeaderBytes
    }

    public mutating func parse(_ bytes: [UInt8]) -> Action {
        parse(bytes[...])
    }

    /// Takes the next chunk; `consumed` in the answer counts from the chunk's first byte.
    public mutating func parse(_ bytes: ArraySlice<UInt8>) -> Action {
        guard !finished else { return .invalid("response already complete") }
        for (index, byte) in bytes.enumerated() {
            header.append(byte)
            if header.count == 5 && !header.elementsEqual("HTTP/".utf8) {
                return finish(.invalid("not an HTTP response: \(Self.printable(header))"))
            }
            if byte == UInt8(ascii: "\n") && Self.endsHeader(header) {
                return finish(interpret(consumed: index + 1))
            }
            if header.count >= maximumHeaderBytes {
                return finish(.invalid("response header larger than \(maximumHeaderBytes) bytes"))
            }
        }
        return .needMoreBytes
    }

    private mutating func finish(_ action: Action) -> Action {
        finished = true
        header = []
        return action
    }

    /// The header ends with an empty line: CRLF CRLF, or bare LF LF (tolerated).
    private static func endsHeader(_ bytes: [UInt8]) -> Bool {
        let n = bytes.count
        if n >= 2 && bytes[n - 2] == UInt8(ascii: "\n") { return true }
        return n >= 4 && bytes[n - 2] == UInt8(ascii: "\r") && bytes[n - 3] == UInt8(ascii: "\n")
    }

    private func interpret(consumed: Int) -> Action {
        // Split bytes, not a String: Swift treats "\r\n" as one Character, so it never equals "\n".
        let lines = header.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            Substring(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
        guard let statusLine = lines.first else { return .invalid("empty response") }
        // HTTP/1.x SP 3DIGIT [SP reason]
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0",
              parts[1].count == 3, parts[1].allSatisfy(\.isASCII), let status = Int(parts[1]), status >= 100 else {
            return .invalid("bad status line: \(Self.printable(Array(statusLine.utf8)))")
        }
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                  !line[..<colon].contains(" ") else {
                return .invalid("bad header line: \(Self.printable(Array(line.utf8)))")
            }
        }
        let reason = parts.count > 2 ? String(parts[2]) : ""
        if (200...299).contains(status) { return .established(consumed: consumed) }
        return .refused(status: status, reason: reason)
    }

    /// At most 80 characters, control bytes escaped, for error messages.
    private static func printable(_ bytes: [UInt8]) -> String {
        var text = ""
        for byte in bytes.prefix(80) {
            text += (32..<127).contains(byte) ? String(UnicodeScalar(byte)) : "\\x" + String(byte, radix: 16)
        }
        return bytes.count > 80 ? text + "…" : text
    }
}
