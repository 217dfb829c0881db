/// Opens a tunnel through an HTTP proxy on a connected socket: sends CONNECT, reads the answer with
/// `ProxyResponseParser` (peeking, then consuming exactly the header, so the TLS stream is untouched), and hands
/// the socket on. Owns the socket and its loop registration until then; keeps itself alive while working.
public final class ProxyTunnel: EventLoopHandler {
    /// Most bytes peeked per read: a proxy's answer header is small; the rest waits for the next read.
    static let peekLimit = 4096

    private let loop: EventLoop
    private var socket: Socket?
    private let proxy: ProxyConfiguration
    private let target: String
    private var request = SocketOutputBuffer()
    private var parser = ProxyResponseParser()
    private var timer: EventLoopTimer?
    private let timeout: Double
    private var completion: ((Result<Socket, TransportError>) -> Void)?

    /// Prepares a CONNECT to `host:port` through `proxy` over `socket` (connected to the proxy; ownership passes
    /// to the tunnel, and back to `completion` on success). `completion` runs once, on the loop, never from
    /// inside `start()`.
    public init(
        loop: EventLoop, socket: Socket, proxy: ProxyConfiguration, host: String, port: Int,
        timeout: Double, completion: @escaping (Result<Socket, TransportError>) -> Void
    ) {
        self.loop = loop
        self.socket = socket
        self.proxy = proxy
        self.target = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        self.timeout = timeout
        self.completion = completion
        request.append(proxy.connectRequest(host: host, port: port))
    }

    /// Connects to the proxy and sends the CONNECT request.
    public func start() {
        guard let socket else { return }
        // The timer's closure keeps the tunnel alive while it works; finishing cancels it.
        timer = loop.schedule(after: timeout) {
            self.finish(
                .failure(
                    TransportError(
                        .timeout, "proxy \(self.proxy) did not answer CONNECT \(self.target) within \(self.timeout)s")))
        }
        do throws(TransportError) {
            try loop.register(socket.fd, interest: [.read, .write], handler: self)
        } catch {
            loop.executeNextTurn { self.finish(.failure(error)) }
        }
    }

    /// Gives up: closes the socket; `completion` is not called.
    public func cancel() {
        completion = nil
        finish(.failure(TransportError(.timeout, "cancelled")))
    }

    /// Sends pending bytes now that the socket is writable.
    public func writable() {
        guard let socket else { return }
        while !request.isEmpty {
            switch request.withUnsentBytes({ socket.send($0) }) {
            case .transferred(let count): request.consume(count)
            case .wouldBlock: return
            case .endOfFile: return finish(.failure(closedEarly()))
            case .failed(let code): return finish(.failure(TransportError.socket("send to proxy \(proxy)", code)))
            }
        }
        loop.setInterest(.read, for: socket.fd)
    }

    /// Reads the proxy's answer now that the socket is readable.
    public func readable() {
        guard let socket else { return }
        loop.withReadBuffer { buffer in
            let peeked: Int
            switch socket.peek(into: &buffer, maxCount: Self.peekLimit) {
            case .transferred(let count): peeked = count
            case .wouldBlock: return
            case .endOfFile: return finish(.failure(closedEarly()))
            case .failed(let code): return finish(.failure(TransportError.socket("read from proxy \(proxy)", code)))
            }
            let action = parser.parse(buffer[..<peeked])
            let consumed: Int
            switch action {
            case .needMoreBytes: consumed = peeked
            case .established(let count): consumed = count
            case .refused, .invalid: consumed = 0
            }
            if consumed > 0 {
                // The bytes were just peeked, so this takes exactly them.
                guard
                    socket.receive(into: &buffer, maxCount: consumed)
                        == .transferred(consumed)
                else {
                    return finish(
                        .failure(TransportError(.proxyProtocolError, "proxy \(proxy): lost bytes of its answer")))
                }
            }
            switch action {
            case .needMoreBytes:
                return
            case .established:
                finish(.success(socket))
            case .refused(let status, let reason):
                let hint =
                    status == 407
                    ? (proxy.username == nil ? " (the proxy wants credentials)" : " (credentials rejected)") : ""
                finish(
                    .failure(
                        TransportError(
                            .proxyRefused, "proxy \(proxy) answered CONNECT \(target) with \(status) \(reason)\(hint)"))
                )
            case .invalid(let why):
                finish(.failure(TransportError(.proxyProtocolError, "proxy \(proxy): \(why)")))
            }
        }
    }

    /// Fails the tunnel: the socket was closed.
    public func hangup() {
        readable()
    }

    private func closedEarly() -> TransportError {
        TransportError(.proxyProtocolError, "proxy \(proxy) closed the connection before answering CONNECT \(target)")
    }

    private func finish(_ result: Result<Socket, TransportError>) {
        timer?.cancel()
        timer = nil
        guard let socket else { return }
        self.socket = nil
        loop.deregister(socket.fd)
        if case .failure = result { socket.close() }
        guard let completion else { return }
        self.completion = nil
        completion(result)
    }
}

extension ProxyTunnel: TLSConnectStage {}

// MARK: - ProxyResponseParser

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

    /// The default limit on the answer's header bytes.
    public static let defaultMaximumHeaderBytes = 16 * 1024

    /// The most header bytes accepted before the answer is refused.
    public let maximumHeaderBytes: Int
    private var header: [UInt8] = []
    private var finished = false

    /// A parser that accepts up to `maximumHeaderBytes` of header.
    public init(maximumHeaderBytes: Int = ProxyResponseParser.defaultMaximumHeaderBytes) {
        self.maximumHeaderBytes = maximumHeaderBytes
    }

    /// Adds received bytes and says whether to wait, proceed, or fail.
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
            parts[1].count == 3, parts[1].allSatisfy(\.isASCII), let status = Int(parts[1]), status >= 100
        else {
            return .invalid("bad status line: \(Self.printable(Array(statusLine.utf8)))")
        }
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                !line[..<colon].contains(" ")
            else {
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
