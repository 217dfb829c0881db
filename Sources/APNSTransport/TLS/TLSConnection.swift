/// One TLS connection over a non-blocking TCP socket, driven by an `EventLoop` (client or server role). Owns the
/// socket, the OpenSSL session, the output buffer and, while connecting, the connect/proxy stage. Reports to its
/// delegate; the owner writes with `write` and `flush`. Loop-confined; the loop retains it while its socket is
/// registered, so it lives until it closes even if the owner lets go.
public final class TLSConnection: EventLoopHandler {
    /// Where the connection is in its life.
    public enum State: Sendable, Hashable {
        /// Resolving, TCP-connecting, or tunnelling through a proxy (clients from `connect`).
        case connecting
        case handshaking
        case established
        /// `close()` was called: flushing what is buffered, then sending close_notify.
        case closing
        case closed
    }

    public weak var delegate: (any TLSConnectionDelegate)?
    public internal(set) var state: State
    /// Set once the handshake completed.
    public internal(set) var handshakeInfo: TLSHandshakeInfo?
    /// The name the client verifies the server against (nil on a server).
    public let serverName: String?
    public let isServer: Bool

    let loop: EventLoop
    let context: TLSContextOpenSSL
    var socket: Socket?
    var session: TLSSessionOpenSSL?
    var output = SocketOutputBuffer()
    /// What the handshake's last step is waiting for.
    var handshakeInterest: EventLoopInterest = .read
    /// SSL_write said WANT_WRITE: wait for writable, then write again.
    var writeWaitsForWritable = false
    /// SSL_write said WANT_READ (a TLS message must be read first): write again when readable.
    var writeWaitsForReadable = false
    /// SSL_read said WANT_WRITE: read again when writable.
    var readWaitsForWritable = false
    /// Output was held back by the socket; tell the delegate when it has all gone.
    var owesDrainNotice = false
    var readContinuesNextTurn = false
    var timer: EventLoopTimer?
    /// The connect or proxy stage in progress (clients from `connect`).
    var stage: (any TLSConnectStage)?

    /// Bytes written but not yet accepted by the socket.
    public var bufferedOutputCount: Int { output.count }

    /// The peer's address once the TCP connection exists (the proxy's when tunnelling); nil before and after.
    public var remoteAddress: SocketAddress? { socket?.peerAddress() }

    /// A client connection over an already-connected socket (ownership of `socket` passes to the connection).
    /// `serverName` is verified against the certificate and sent as SNI (not for IP literals). The handshake
    /// starts on the loop's next turn.
    public convenience init(clientSocket socket: Socket, serverName: String, context: TLSClientContext,
                            loop: EventLoop, delegate: (any TLSConnectionDelegate)?) throws(TransportError) {
        self.init(loop: loop, context: context.context, serverName: serverName, delegate: delegate)
        try attach(socket)
    }

    /// The server side of an accepted socket (ownership of `socket` passes to the connection). The handshake
    /// proceeds as the client's messages arrive.
    public convenience init(acceptedSocket socket: Socket, context: TLSServerContext, loop: EventLoop,
                            delegate: (any TLSConnectionDelegate)?) throws(TransportError) {
        self.init(loop: loop, context: context.context, serverName: nil, delegate: delegate)
        try attach(socket)
    }

    init(loop: EventLoop, context: TLSContextOpenSSL, serverName: String?, delegate: (any TLSConnectionDelegate)?) {
        self.loop = loop
        self.context = context
        self.serverName = serverName
        self.isServer = context.isServer
        self.delegate = delegate
        state = .connecting
    }

    /// Queues `bytes` for sending (copied; no system call). Sent by `flush()`, or right after the handshake when
    /// written earlier. Ignored once closing or closed.
    public func write(_ bytes: [UInt8]) {
        guard state != .closing && state != .closed else { return }
        output.append(bytes)
    }

    /// Sends what is queued, as far as the socket takes it now; the rest goes when it becomes writable.
    public func flush() {
        guard state == .established, !writeWaitsForWritable, !writeWaitsForReadable else { return }
        drainOutput()
    }

    /// Closes gracefully: sends what is queued, then close_notify, then closes the socket (within
    /// `gracePeriod` seconds, else it aborts). The delegate hears nothing more. Before the handshake completed,
    /// the same as `abort()`.
    public func close(gracePeriod: Double = 5) {
        guard state == .established else {
            abort()
            return
        }
        state = .closing
        timer?.cancel()
        timer = loop.schedule(after: gracePeriod) { [weak self] in self?.teardown() }
        if !writeWaitsForWritable && !writeWaitsForReadable { drainOutput() }
    }

    /// Closes at once, dropping queued output and sending nothing. The delegate hears nothing more.
    public func abort() {
        teardown()
    }

    /// Registers `socket` and prepares the TLS session; the handshake runs from readiness callbacks.
    func attach(_ socket: Socket) throws(TransportError) {
        self.socket = socket
        session = try TLSSessionOpenSSL(context: context, fd: socket.fd, serverName: serverName)
        state = .handshaking
        // A client speaks first: writable (at once) starts its handshake. A server waits for the ClientHello.
        handshakeInterest = isServer ? .read : [.read, .write]
        try loop.register(socket.fd, interest: handshakeInterest, handler: self)
        let seconds = context.handshakeTimeout
        timer?.cancel()
        timer = loop.schedule(after: seconds) { [weak self] in
            self?.fail(TransportError(.timeout, "TLS handshake not complete after \(seconds)s"))
        }
    }

    /// Ends the connection after a failure: tells the delegate, unless the owner already closed it.
    func fail(_ error: TransportError?) {
        guard state != .closed else { return }
        let tell = state != .closing
        teardown()
        if tell { delegate?.tlsConnection(self, didCloseWith: error) }
    }

    /// Releases everything: timer, stage, registration, session, socket, queued output.
    func teardown() {
        guard state != .closed else { return }
        state = .closed
        timer?.cancel()
        timer = nil
        stage?.cancel()
        stage = nil
        if let socket {
            loop.deregister(socket.fd)
            socket.close()
        }
        socket = nil
        session = nil
        output.removeAll()
    }

    /// Sets the loop interest the current state needs (no system call when unchanged).
    func updateInterest() {
        guard let socket else { return }
        var interest: EventLoopInterest = .read
        switch state {
        case .handshaking:
            interest = handshakeInterest
        case .established, .closing:
            if writeWaitsForWritable || readWaitsForWritable { interest.insert(.write) }
        case .connecting, .closed:
            return
        }
        loop.setInterest(interest, for: socket.fd)
    }
}

/// A step before TLS that the connection can cancel (TCP connect, proxy tunnel).
protocol TLSConnectStage: AnyObject {
    func cancel()
}

extension SocketConnector: TLSConnectStage {}

/// Hears from a `TLSConnection`, on the event loop's thread. The owner (an HTTP/2 connection) implements it.
///
/// Contract: after `didCloseWith`, or after the owner called `close()`/`abort()`, nothing more is reported.
/// No callback is made from inside the connection's initializers or `connect`.
public protocol TLSConnectionDelegate: AnyObject {
    /// The handshake completed (and, on a client, ALPN and pins were checked). Writes made before this are
    /// flushed right after it returns.
    func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo)

    /// Decrypted bytes arrived. `bytes` borrows a buffer the loop reuses: it lives only during this call.
    func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan)

    /// Output that had to wait for the socket (the kernel buffer was full) has all gone out: a good moment to
    /// produce more.
    func tlsConnectionDidDrainOutput(_ connection: TLSConnection)

    /// The connection ended: nil when the peer closed cleanly (close_notify), else why (connect or handshake
    /// failure, certificate, pin or ALPN refusal, EOF without close_notify, reset, timeout).
    func tlsConnection(_ connection: TLSConnection, didCloseWith error: TransportError?)
}
