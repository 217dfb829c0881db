/// Opens a tunnel through an HTTP proxy on a connected socket: sends CONNECT, reads the answer with
/// `ProxyResponseParser` (peeking, then consuming exactly the header, so the TLS stream is untouched), and hands
/// the socket on. Owns the socket and its loop registration until then; keeps itself alive while working.
public final class ProxyTunnel: EventLoopHandler {
    private let loop: EventLoop
    private var socket: Socket?
    private let proxy: ProxyConfiguration
    private let target: String
    private var request = SocketOutputBuffer()
    private var parser = ProxyResponseParser()
    /// Bytes of the proxy's answer looked at per read (peeked, so what follows the answer stays for TLS).
    private static let peekLimit = 4096
    private var timer: EventLoopTimer?
    private let timeout: Double
    private var completion: ((Result<Socket, TransportError>) -> Void)?

    /// Prepares a CONNECT to `host:port` through `proxy` over `socket` (connected to the proxy; ownership passes
    /// to the tunnel, and back to `completion` on success). `completion` runs once, on the loop, never from
    /// inside `start()`.
    public init(loop: EventLoop, socket: Socket, proxy: ProxyConfiguration, host: String, port: Int,
                timeout: Double, completion: @escaping (Result<Socket, TransportError>) -> Void) {
        self.loop = loop
        self.socket = socket
        self.proxy = proxy
        self.target = "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        self.timeout = timeout
        self.completion = completion
        request.append(proxy.connectRequest(host: host, port: port))
    }

    public func start() {
        guard let socket else { return }
        // The timer's closure keeps the tunnel alive while it works; finishing cancels it.
        timer = loop.schedule(after: timeout) {
            self.finish(.failure(TransportError(.timeout, "proxy \(self.proxy) did not answer CONNECT \(self.target) within \(self.timeout)s")))
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

    public func readable() {
        guard let socket else { return }
        loop.withReadBuffer { buffer in
            let peeked: Int
            switch socket.peek(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<Self.peekLimit])) {
            case .transferred(let count): peeked = count
            case .wouldBlock: return
            case .endOfFile: return finish(.failure(closedEarly()))
            case .failed(let code): return finish(.failure(TransportError.socket("read from proxy \(proxy)", code)))
            }
            let action = parser.parse(UnsafeRawBufferPointer(rebasing: buffer[..<peeked]))
            let consumed: Int
            switch action {
            case .needMoreBytes: consumed = peeked
            case .established(let count): consumed = count
            case .refused, .invalid: consumed = 0
            }
            if consumed > 0 {
                // The bytes were just peeked, so this takes exactly them.
                guard socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<consumed]))
                        == .transferred(consumed) else {
                    return finish(.failure(TransportError(.proxyProtocolError, "proxy \(proxy): lost bytes of its answer")))
                }
            }
            switch action {
            case .needMoreBytes:
                return
            case .established:
                finish(.success(socket))
            case .refused(let status, let reason):
                let hint = status == 407 ? (proxy.username == nil ? " (the proxy wants credentials)" : " (credentials rejected)") : ""
                finish(.failure(TransportError(.proxyRefused, "proxy \(proxy) answered CONNECT \(target) with \(status) \(reason)\(hint)")))
            case .invalid(let why):
                finish(.failure(TransportError(.proxyProtocolError, "proxy \(proxy): \(why)")))
            }
        }
    }

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
