import APNSCore

/// One TLS connection over a non-blocking TCP socket, driven by an `EventLoop` (client or server role). Owns the
/// socket, the OpenSSL session, the output buffer and, while connecting, the connect/proxy stage. Reports to its
/// delegate; the owner writes with `write` and `flush`. Loop-confined; the loop retains it while its socket is
/// registered, so it lives until it closes even if the owner lets go.
///
/// What happens next is decided by its `TLSConnectionStateMachine` (the states and transitions are drawn there):
/// the connection feeds it every event and runs the actions it returns. Events raised while actions run (the
/// delegate's calls, the result of a write or a handshake step) are queued and fed in after, in order, so neither
/// the machine nor the delegate is entered re-entrantly.
public final class TLSConnection: EventLoopHandler {
    /// Where the connection is in its life.
    public enum State: Sendable, Hashable {
        /// Resolving, TCP-connecting, or tunnelling through a proxy (clients from `connect`).
        case connecting
        /// The TLS handshake runs.
        case handshaking
        /// The handshake completed: data flows both ways.
        case established
        /// `close()` was called: flushing what is buffered, then sending close_notify.
        case closing
        /// Ended; the socket is closed.
        case closed
    }

    /// Receives the connection's data and events.
    public weak var delegate: (any TLSConnectionDelegate)?
    /// Where the connection stands, from connecting through the handshake to established and closed.
    public var state: State {
        switch machine.state {
        case .connecting: .connecting
        case .handshaking: .handshaking
        case .established: .established
        case .closing: .closing
        case .closed: .closed
        }
    }
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
    private(set) var machine: TLSConnectionStateMachine
    @exclusivity(unchecked)
    var socket: Socket?
    @exclusivity(unchecked)
    var session: TLSSessionOpenSSL?
    @exclusivity(unchecked)
    var output = SocketOutputBuffer()
    @exclusivity(unchecked)
    var timer: EventLoopTimer?
    /// The connect or proxy stage in progress (clients from `connect`).
    @exclusivity(unchecked)
    var stage: (any TLSConnectStage)?
    /// Where `connect` goes (clients from `connect`).
    @exclusivity(unchecked)
    var route: Route?
    /// Events raised while actions run, fed in after them in order (`pendingHead` is the next).
    @exclusivity(unchecked)
    private var pending: [Event] = []
    @exclusivity(unchecked)
    private var pendingHead = 0
    /// Actions are running: new events wait in `pending`.
    @exclusivity(unchecked)
    private var running = false
    /// What runs started in one of the owner's calls: the delegate is told on the next turn.
    @exclusivity(unchecked)
    private var inOwnersCall = false
    /// The error of a close met inside one of the owner's calls (a write failing in `flush()`), whose report waits
    /// for the next turn: the owner, seeing `state` closed when its call returns, can act on it at once.
    @exclusivity(unchecked)
    private(set) var closeErrorToldNextTurn: TransportError?

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

    init(
        loop: EventLoop, context: TLSContextOpenSSL, serverName: String?, tunnels: Bool = false,
        delegate: (any TLSConnectionDelegate)?
    ) {
        self.loop = loop
        self.context = context
        self.serverName = serverName
        self.isServer = context.isServer
        self.delegate = delegate
        machine = TLSConnectionStateMachine(
            isServer: context.isServer, tunnels: tunnels, handshakeTimeout: context.handshakeTimeout)
    }

    /// Queues `bytes` for sending (copied; no system call). Sent by `flush()`, or right after the handshake when
    /// written earlier. Ignored once closing or closed.
    public func write(_ bytes: [UInt8]) {
        // A write changes no state, so it is answered at once (no copy to queue), unless a close waits ahead of it:
        // then it waits its turn, to be ignored as a write after a close is.
        guard !closeIsPending else {
            pending.append(.write(bytes))
            return
        }
        append(bytes, machine.writeRequested())
    }

    /// Sends what is queued, as far as the socket takes it now; the rest goes when it becomes writable. Called
    /// from inside a delegate callback, it runs once the callback returns; a write failing here is reported to the
    /// delegate after this returns (on the next loop turn), never from inside it.
    public func flush() {
        handle(.flush, fromOwner: true)
    }

    /// Closes gracefully: sends what is queued, then close_notify, then closes the socket (within
    /// `gracePeriod` seconds, else it aborts). The delegate hears nothing more. Before the handshake completed,
    /// the same as `abort()`. Called from inside a delegate callback, it takes effect once the callback returns.
    public func close(gracePeriod: Double = 5) {
        handle(.close(gracePeriod: gracePeriod), fromOwner: true)
    }

    /// Closes at once, dropping queued output and sending nothing. The delegate hears nothing more (but a close
    /// that happened before, inside `flush()`, is still reported once). Called from inside a delegate callback, it
    /// takes effect once the callback returns.
    public func abort() {
        handle(.abort, fromOwner: true)
    }

    /// Starts TLS on the connected `socket` given to an initializer; the handshake runs from readiness callbacks.
    func attach(_ socket: Socket) throws(TransportError) {
        for action in machine.attached() {
            if case .startTLS(let interest) = action {
                try startTLS(on: socket, interest: interest)
            } else {
                perform(action)
            }
        }
    }

    /// Makes the session on `socket` and registers the socket with the loop.
    private func startTLS(on socket: Socket, interest: EventLoopInterest) throws(TransportError) {
        self.socket = socket
        session = try TLSSessionOpenSSL(context: context, fd: socket.fd, serverName: serverName)
        try loop.register(socket.fd, interest: interest, handler: self)
    }
}

// MARK: - Events and actions

extension TLSConnection {
    /// Where a client from `connect` goes.
    struct Route {
        var host: String
        var port: Int
        var proxy: ProxyConfiguration?
        var dialing: DialPlan
    }

    /// What the connection hears, with what it carries; fed to the machine, or queued while actions run.
    enum Event {
        case readable, writable, hangup, timerFired, readingResumed
        case resolved(Result<[SocketAddress], TransportError>)
        case dialed(Result<Socket, TransportError>)
        case tunnelled(Result<Socket, TransportError>)
        case startFailed(TransportError)
        case handshakeStepped(TLSSessionResult)
        case handshakeReported
        case delivered
        case wrote(TLSSessionResult)
        case write([UInt8])
        case flush
        case close(gracePeriod: Double)
        case abort
        /// A delegate call deferred from inside one of the owner's calls.
        case tell(TLSConnectionStateMachine.Action)
    }

    /// Whether the owner's `close` waits in `pending`. (The other events waiting cannot change whether a write is
    /// kept, or they drop the output with the connection.)
    private var closeIsPending: Bool {
        var index = pendingHead
        while index < pending.count {
            if case .close = pending[index] { return true }
            index += 1
        }
        return false
    }

    /// Feeds `event` in, runs what the machine returns, then the events raised meanwhile, until none is left.
    /// While actions run, `event` waits its turn. `fromOwner`: one of the owner's calls, from which the delegate
    /// is never called (what it should hear is told on the next turn).
    private func handle(_ event: Event, fromOwner: Bool = false) {
        guard !running else {
            pending.append(event)
            return
        }
        running = true
        inOwnersCall = fromOwner
        feed(event)
        while pendingHead < pending.count {
            let next = pending[pendingHead]
            pendingHead += 1
            feed(next)
        }
        pending.removeAll(keepingCapacity: true)
        pendingHead = 0
        inOwnersCall = false
        running = false
    }

    /// Feeds one event to the machine and runs its actions.
    private func feed(_ event: Event) {
        switch event {
        case .readable: run(machine.readable())
        case .writable: run(machine.writable())
        case .hangup: run(machine.hangup())
        case .timerFired: run(machine.timerFired())
        case .readingResumed: run(machine.readingResumed())
        case .resolved(.success(let addresses)):
            for action in machine.resolved() {
                if case .dial = action { dial(addresses) } else { perform(action) }
            }
        case .resolved(.failure(let error)):
            guard let proxy = route?.proxy else { return run(machine.connectFailed(error)) }
            run(machine.connectFailed(TransportError(error.kind, "proxy \(proxy.description): \(error.detail)")))
        case .dialed(.success(let socket)):
            stage = nil
            run(machine.dialed(), socket: socket)
        case .tunnelled(.success(let socket)):
            stage = nil
            run(machine.tunnelled(), socket: socket)
        case .dialed(.failure(let error)), .tunnelled(.failure(let error)):
            stage = nil
            run(machine.connectFailed(error))
        case .startFailed(let error): run(machine.startFailed(error))
        case .handshakeStepped(let result): run(machine.handshakeStepped(result))
        case .handshakeReported: run(machine.handshakeReported())
        case .delivered: run(machine.delivered())
        case .wrote(let result): run(machine.wrote(result))
        case .write(let bytes): append(bytes, machine.writeRequested())
        case .flush: run(machine.flushRequested())
        case .close(let gracePeriod): run(machine.closeRequested(gracePeriod: gracePeriod))
        case .abort: run(machine.abortRequested())
        case .tell(let action): perform(action)
        }
    }

    private func run(_ actions: TLSConnectionStateMachine.Actions, socket: Socket? = nil) {
        for action in actions { perform(action, socket: socket) }
    }

    /// Runs what `writeRequested` returned for `bytes`.
    private func append(_ bytes: [UInt8], _ actions: TLSConnectionStateMachine.Actions) {
        for action in actions {
            if case .appendOutput = action { output.append(bytes) } else { perform(action) }
        }
    }

    /// Runs one action. `socket`: the one the event that led to it carried (a connect stage's result).
    private func perform(_ action: TLSConnectionStateMachine.Action, socket given: Socket? = nil) {
        switch action {
        case .dial, .appendOutput, .deliver:
            break  // run where their event's data is (`feed`, `append`, `read`)
        case .openTunnel:
            guard let given, let route, let proxy = route.proxy else { return }
            openTunnel(on: given, through: proxy, to: route)
        case .startTLS(let interest):
            guard let given else { return }
            do throws(TransportError) {
                try startTLS(on: given, interest: interest)
            } catch {
                pending.append(.startFailed(error))
            }
        case .setInterest(let interest):
            if let socket { loop.setInterest(interest, for: socket.fd) }
        case .armTimer(let seconds):
            timer?.cancel()
            timer = loop.schedule(after: seconds) { [weak self] in self?.handle(.timerFired) }
        case .cancelTimer:
            timer?.cancel()
            timer = nil
        case .stepHandshake:
            stepHandshake()
        case .read(let rememberSession):
            read(rememberingSession: rememberSession)
        case .resumeReadingNextTurn:
            loop.executeNextTurn { [weak self] in self?.handle(.readingResumed) }
        case .write:
            writeOutput()
        case .sendCloseNotify:
            session?.sendCloseNotify()
        case .reportHandshake:
            if let handshakeInfo { delegate?.tlsConnection(self, didCompleteHandshake: handshakeInfo) }
            pending.append(.handshakeReported)
        case .reportDrained:
            guard !inOwnersCall else { return tellNextTurn(action) }
            delegate?.tlsConnectionDidDrainOutput(self)
        case .reportClosed(let error):
            guard !inOwnersCall else {
                closeErrorToldNextTurn = error
                return tellNextTurn(action)
            }
            delegate?.tlsConnection(self, didCloseWith: error)
        case .tearDown:
            tearDown()
        }
    }

    /// The delegate hears `action` on the next turn, not from inside the owner's call (the connection stays alive
    /// until then).
    private func tellNextTurn(_ action: TLSConnectionStateMachine.Action) {
        loop.executeNextTurn { self.handle(.tell(action)) }
    }

    /// Releases everything: timer, stage, registration, session, socket, queued output.
    private func tearDown() {
        timer?.cancel()
        timer = nil
        stage?.cancel()
        stage = nil
        route = nil
        if let socket {
            loop.deregister(socket.fd)
            socket.close()
        }
        socket = nil
        session = nil
        output.removeAll()
    }
}

/// A step before TLS that the connection can cancel (TCP connect, proxy tunnel).
protocol TLSConnectStage: AnyObject {
    func cancel()
}

extension SocketConnector: TLSConnectStage {}

/// Hears from a `TLSConnection`, on the event loop's thread. The owner (an HTTP/2 connection) implements it.
///
/// Contract: `didCloseWith` comes once, and only for an ending the owner did not ask for; after it, or after the
/// owner called `close()`/`abort()`, nothing more is reported, except that close itself when it happened inside
/// one of the owner's own calls (a `flush()` whose write failed): no callback is made from inside the owner's calls
/// (`write`, `flush`, `close`, `abort`), the connection's initializers or `connect`, so such a close is reported on
/// the next loop turn. A `flush`, `close` or `abort` called from inside a callback is done once that callback returns.
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
        let connection = TLSConnection(
            loop: loop, context: context.context, serverName: literal, tunnels: proxy != nil, delegate: delegate)
        connection.startConnecting(host: literal, port: port, proxy: proxy, dialing: dialing)
        return connection
    }

    private func startConnecting(host: String, port: Int, proxy: ProxyConfiguration?, dialing: DialPlan) {
        route = Route(host: host, port: port, proxy: proxy, dialing: dialing)
        let dialHost = proxy?.host ?? host
        let dialPort = proxy?.port ?? port
        if let pinned = dialing.overrides.addresses(host: dialHost, port: dialPort) {
            loop.executeNextTurn { self.handle(.resolved(.success(pinned))) }
        } else {
            loop.resolve(host: dialHost, port: dialPort) { self.handle(.resolved($0)) }
        }
    }

    /// Starts the TCP connect to `addresses` (racing them as the dial plan says).
    private func dial(_ addresses: [SocketAddress]) {
        guard let route else { return }
        let connector = SocketConnector(
            loop: loop, addresses: route.dialing.ordered(addresses), timeout: context.connectTimeout,
            attemptDelay: route.dialing.attemptDelay, report: route.dialing.report
        ) { self.handle(.dialed($0)) }
        stage = connector
        connector.start()
    }

    /// Sends CONNECT through `proxy` over `socket`, for `route`'s host and port.
    private func openTunnel(on socket: Socket, through proxy: ProxyConfiguration, to route: Route) {
        let tunnel = ProxyTunnel(
            loop: loop, socket: socket, proxy: proxy, host: route.host, port: route.port,
            timeout: context.handshakeTimeout
        ) { self.handle(.tunnelled($0)) }
        stage = tunnel
        tunnel.start()
    }
}

// MARK: - IO

extension TLSConnection {
    /// Reads and decrypts what the socket has.
    public func readable() {
        handle(.readable)
    }

    /// Sends pending encrypted bytes now that the socket is writable.
    public func writable() {
        handle(.writable)
    }

    /// Closes the connection: the peer hung up.
    public func hangup() {
        handle(.hangup)
    }

    /// One handshake step; its result (a client's refusal of the peer as a failure) is fed in after.
    private func stepHandshake() {
        guard let session else { return }
        var result = session.handshake()
        if case .transferred = result {
            let info = session.handshakeInfo()
            if !isServer, let refusal = refusal(of: info, session) {
                result = .failed(refusal)
            } else {
                handshakeInfo = info
            }
        }
        pending.append(.handshakeStepped(result))
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

    /// Reads into the loop's buffer and feeds each result in at once (the bytes live only in that buffer): bytes
    /// go to the delegate, and `delivered` follows what the delegate did; a read that the machine says to repeat
    /// (dropping what arrives while closing) reads again here.
    private func read(rememberingSession: Bool) {
        guard let session else { return }
        loop.withReadBuffer { buffer in
            var again: Bool? = rememberingSession
            while let remember = again {
                again = nil
                let result = session.read(into: &buffer)
                let remembered = remember && session.rememberSessionIfResumable()
                for action in machine.read(result, sessionRemembered: remembered) {
                    switch action {
                    case .deliver(let count):
                        delegate?.tlsConnection(self, didReceive: buffer.span.extracting(..<count).bytes)
                        pending.append(.delivered)
                    case .read(let remember):
                        again = remember
                    default:
                        perform(action)
                    }
                }
            }
        }
    }

    /// Writes queued output until it is gone or OpenSSL pushes back; the outcome is fed in after.
    private func writeOutput() {
        guard let session else { return }
        var outcome = TLSSessionResult.transferred(0)
        while !output.isEmpty {
            let result = output.withUnsentBytes { session.write($0) }
            guard case .transferred(let count) = result else {
                outcome = result
                break
            }
            output.consume(count)
        }
        pending.append(.wrote(outcome))
    }
}
