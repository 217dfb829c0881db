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

    /// Receives the connection's data and events.
    public weak var delegate: (any TLSConnectionDelegate)?
    /// Where the connection stands, from connecting through the handshake to established and closed.
    @exclusivity(unchecked)
    public internal(set) var state: State
    /// Set once the handshake completed.
    @exclusivity(unchecked)
    public internal(set) var handshakeInfo: TLSHandshakeInfo?
    /// The name the client verifies the server against (nil on a server).
    public let serverName: String?
    /// Whether this is the server side.
    public let isServer: Bool

    let loop: EventLoop
    let context: TLSContextOpenSSL
    @exclusivity(unchecked)
    var socket: Socket?
    @exclusivity(unchecked)
    var session: TLSSessionOpenSSL?
    @exclusivity(unchecked)
    var output = SocketOutputBuffer()
    /// What the handshake's last step is waiting for.
    @exclusivity(unchecked)
    var handshakeInterest: EventLoopInterest = .read
    /// SSL_write said WANT_WRITE: wait for writable, then write again.
    @exclusivity(unchecked)
    var writeWaitsForWritable = false
    /// SSL_write said WANT_READ (a TLS message must be read first): write again when readable.
    @exclusivity(unchecked)
    var writeWaitsForReadable = false
    /// SSL_read said WANT_WRITE: read again when writable.
    @exclusivity(unchecked)
    var readWaitsForWritable = false
    /// Output was held back by the socket; tell the delegate when it has all gone.
    @exclusivity(unchecked)
    var owesDrainNotice = false
    @exclusivity(unchecked)
    var readContinuesNextTurn = false
    /// Client: whether this connection's session is still to be remembered for the next connections to resume (it
    /// becomes resumable once the server's session ticket has been read, after the handshake).
    @exclusivity(unchecked)
    var sessionToRemember: Bool
    @exclusivity(unchecked)
    var timer: EventLoopTimer?
    /// The connect or proxy stage in progress (clients from `connect`).
    @exclusivity(unchecked)
    var stage: (any TLSConnectStage)?

    /// Bytes written but not yet accepted by the socket.
    public var bufferedOutputCount: Int { output.count }

    /// The peer's address once the TCP connection exists (the proxy's when tunnelling); nil before and after.
    public var remoteAddress: SocketAddress? { socket?.peerAddress() }

    /// A client connection over an already-connected socket (ownership of `socket` passes to the connection).
    /// `serverName` is verified against the certificate and sent as SNI (not for IP literals). The handshake
    /// starts on the loop's next turn.
    public convenience init(
        clientSocket socket: Socket, serverName: String, context: TLSClientContext,
        loop: EventLoop, delegate: (any TLSConnectionDelegate)?
    ) throws(TransportError) {
        self.init(loop: loop, context: context.context, serverName: serverName, delegate: delegate)
        try attach(socket)
    }

    /// The server side of an accepted socket (ownership of `socket` passes to the connection). The handshake
    /// proceeds as the client's messages arrive.
    public convenience init(
        acceptedSocket socket: Socket, context: TLSServerContext, loop: EventLoop,
        delegate: (any TLSConnectionDelegate)?
    ) throws(TransportError) {
        self.init(loop: loop, context: context.context, serverName: nil, delegate: delegate)
        try attach(socket)
    }

    init(loop: EventLoop, context: TLSContextOpenSSL, serverName: String?, delegate: (any TLSConnectionDelegate)?) {
        self.loop = loop
        self.context = context
        sessionToRemember = !context.isServer
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

// MARK: - Connect

extension TLSConnection {
    /// Opens a client connection to `host:port`: resolves the name off the loop (or takes the addresses
    /// `dialing.overrides` pins for it), connects over TCP racing the addresses as `SocketConnector` does (Happy
    /// Eyeballs, each address within the configured connect timeout), tunnels through `proxy` with CONNECT when
    /// given (then the proxy's name is the one resolved or pinned), then runs the TLS handshake verifying `host`.
    /// Returns at once; the delegate hears `didCompleteHandshake` or `didCloseWith(error)` on a later turn. Writes
    /// made before the handshake are sent right after it.
    public static func connect(
        host: String, port: Int, proxy: ProxyConfiguration? = nil,
        context: TLSClientContext, loop: EventLoop, dialing: DialPlan = DialPlan(),
        delegate: (any TLSConnectionDelegate)?
    ) -> TLSConnection {
        let literal = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let connection = TLSConnection(loop: loop, context: context.context, serverName: literal, delegate: delegate)
        connection.startConnecting(host: literal, port: port, proxy: proxy, dialing: dialing)
        return connection
    }

    private func startConnecting(host: String, port: Int, proxy: ProxyConfiguration?, dialing: DialPlan) {
        let dialHost = proxy?.host ?? host
        let dialPort = proxy?.port ?? port
        let found: (Result<[SocketAddress], TransportError>) -> Void = { result in
            guard self.state == .connecting else { return }
            switch result {
            case .failure(let error):
                self.fail(
                    proxy == nil
                        ? error : TransportError(error.kind, "proxy \(proxy?.description ?? ""): \(error.detail)"))
            case .success(let addresses):
                let connector = SocketConnector(
                    loop: self.loop, addresses: dialing.ordered(addresses), timeout: self.context.connectTimeout,
                    attemptDelay: dialing.attemptDelay, report: dialing.report
                ) { result in
                    self.stage = nil
                    self.connected(result, host: host, port: port, proxy: proxy)
                }
                self.stage = connector
                connector.start()
            }
        }
        if let pinned = dialing.overrides.addresses(host: dialHost, port: dialPort) {
            loop.executeNextTurn { found(.success(pinned)) }
        } else {
            loop.resolve(host: dialHost, port: dialPort, completion: found)
        }
    }

    private func connected(
        _ result: Result<Socket, TransportError>, host: String, port: Int, proxy: ProxyConfiguration?
    ) {
        guard state == .connecting else { return }
        switch result {
        case .failure(let error):
            fail(error)
        case .success(let socket):
            guard let proxy else {
                startTLS(on: socket)
                return
            }
            let tunnel = ProxyTunnel(
                loop: loop, socket: socket, proxy: proxy, host: host, port: port,
                timeout: context.handshakeTimeout
            ) { result in
                self.stage = nil
                guard self.state == .connecting else { return }
                switch result {
                case .failure(let error): self.fail(error)
                case .success(let socket): self.startTLS(on: socket)
                }
            }
            stage = tunnel
            tunnel.start()
        }
    }

    private func startTLS(on socket: Socket) {
        do throws(TransportError) {
            try attach(socket)
        } catch {
            fail(error)
        }
    }
}

// MARK: - IO

extension TLSConnection {
    /// Most bytes delivered per readiness event before yielding to other connections for a turn.
    static let readBudget = 1 << 20

    /// Reads and decrypts what the socket has.
    public func readable() {
        switch state {
        case .handshaking:
            continueHandshake()
        case .established, .closing:
            if writeWaitsForReadable {
                writeWaitsForReadable = false
                drainOutput()
            }
            readAvailable()
        case .connecting, .closed:
            break
        }
    }

    /// Sends pending encrypted bytes now that the socket is writable.
    public func writable() {
        switch state {
        case .handshaking:
            continueHandshake()
        case .established, .closing:
            if readWaitsForWritable {
                readWaitsForWritable = false
                readAvailable()
            }
            if writeWaitsForWritable {
                writeWaitsForWritable = false
                drainOutput()
            }
            updateInterest()
        case .connecting, .closed:
            break
        }
    }

    /// Closes the connection: the peer hung up.
    public func hangup() {
        readable()
    }

    func continueHandshake() {
        guard let session else { return }
        switch session.handshake() {
        case .transferred:
            completeHandshake(session)
        case .wantRead:
            handshakeInterest = .read
            updateInterest()
        case .wantWrite:
            handshakeInterest = [.read, .write]
            updateInterest()
        case .failed(let error):
            fail(error)
        case .closeNotify, .endOfFile:
            fail(TransportError(.handshakeFailed, "the peer closed the connection"))
        }
    }

    private func completeHandshake(_ session: TLSSessionOpenSSL) {
        timer?.cancel()
        timer = nil
        let info = session.handshakeInfo()
        if !isServer {
            if let refusal = refusal(of: info, session) {
                fail(refusal)
                return
            }
        }
        handshakeInfo = info
        state = .established
        updateInterest()
        delegate?.tlsConnection(self, didCompleteHandshake: info)
        guard state == .established else { return }
        if !output.isEmpty { drainOutput() }
        // Read-ahead may have pulled application data in with the last handshake message.
        readAvailable()
    }

    /// Why a client must refuse a completed handshake: ALPN not among ours, or no pinned key in the chain.
    private func refusal(of info: TLSHandshakeInfo, _ session: TLSSessionOpenSSL) -> TransportError? {
        let required = context.requiredProtocols
        if !required.isEmpty {
            guard let selected = info.applicationProtocol else {
                return TransportError(
                    .alpnNotH2, "the server selected no protocol (offered \(required.joined(separator: ", ")))")
            }
            guard required.contains(selected) else {
                return TransportError(.alpnNotH2, "the server selected '\(selected)'")
            }
        }
        // A resumed session was pinned when it was made: only sessions of connections that passed this check are
        // remembered (`TLSContextOpenSSL.rememberSession`), and a resumption exchanges no certificates to check.
        if !context.pins.isEmpty, !session.isResumed {
            let chain = session.peerCertificates(includeVerified: true)
            guard chain.contains(where: { context.pins.contains($0.spkiSHA256Base64) }) else {
                let presented = chain.map { "\($0.spkiSHA256Base64) (\($0.subject))" }.joined(separator: ", ")
                return TransportError(
                    .pinMismatch, "presented: \(presented); pinned: \(context.pins.sorted().joined(separator: ", "))")
            }
        }
        return nil
    }

    /// Decrypts and delivers what is available, up to the read budget.
    func readAvailable() {
        guard let session else { return }
        var budget = Self.readBudget
        loop.withReadBuffer { buffer in
            while state == .established || state == .closing {
                let result = session.read(into: &buffer)
                if sessionToRemember, state == .established {
                    sessionToRemember = !session.rememberSessionIfResumable()
                }
                switch result {
                case .transferred(let count):
                    if state == .established {
                        delegate?.tlsConnection(self, didReceive: buffer.span.extracting(..<count).bytes)
                    }  // while closing, what still arrives is dropped
                    budget -= count
                    if budget <= 0 {
                        continueReadingNextTurn()
                        return
                    }
                case .wantRead:
                    return
                case .wantWrite:
                    readWaitsForWritable = true
                    updateInterest()
                    return
                case .closeNotify:
                    session.sendCloseNotify()
                    fail(nil)
                    return
                case .endOfFile:
                    fail(TransportError(.closedByPeer, "TCP closed without TLS close_notify"))
                    return
                case .failed(let error):
                    fail(error)
                    return
                }
            }
        }
    }

    /// Level-triggered epoll will not report bytes OpenSSL already holds: come back next turn to keep reading.
    private func continueReadingNextTurn() {
        guard !readContinuesNextTurn else { return }
        readContinuesNextTurn = true
        loop.executeNextTurn { [weak self] in
            guard let self else { return }
            self.readContinuesNextTurn = false
            self.readAvailable()
        }
    }

    /// Writes queued output until it is gone or the socket pushes back.
    func drainOutput() {
        guard let session else { return }
        while !output.isEmpty {
            switch output.withUnsentBytes({ session.write($0) }) {
            case .transferred(let count):
                output.consume(count)
            case .wantWrite:
                writeWaitsForWritable = true
                owesDrainNotice = true
                updateInterest()
                return
            case .wantRead:
                writeWaitsForReadable = true
                owesDrainNotice = true
                return
            case .closeNotify, .endOfFile:
                fail(TransportError(.closedByPeer, "while writing"))
                return
            case .failed(let error):
                fail(error)
                return
            }
        }
        if state == .closing {
            session.sendCloseNotify()
            teardown()
            return
        }
        updateInterest()
        if owesDrainNotice {
            owesDrainNotice = false
            delegate?.tlsConnectionDidDrainOutput(self)
        }
    }
}
