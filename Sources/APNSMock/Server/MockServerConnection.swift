import APNSHTTP2
import APNSTransport

/// One client connection of a mock server: owns its TLS connection, its HTTP/2 server session, the validator's
/// state for it (`MockConnectionState`), the reused request, response-field and output buffers, and the timers
/// of answers held back by injected latency. Loop-confined. Requests decoded from one read are answered into
/// nghttp2 at once; the bytes go out in one flush at the end of the loop's turn.
final class MockServerConnection: TLSConnectionDelegate {
    /// Output queued in the TLS connection above which no more is produced until it drains.
    static let outputHighWater = 1 << 20

    unowned let listener: MockListener
    let loop: EventLoop
    /// Nil once the connection has finished (or before `accept` attached it).
    private(set) var tls: TLSConnection?
    let session: HTTP2ServerSession
    /// The validator's view of the connection; a placeholder until the handshake completes.
    var state: MockConnectionState
    var responseFields = HTTP2HeaderFieldList(reservingFields: 2, bytes: 128)
    var output: [UInt8] = []
    /// Answers waiting for their latency timer, by stream id.
    var delayedAnswers: [Int32: EventLoopTimer] = [:]
    private(set) var isFinished = false
    /// The first output still has to be rewritten to announce the initial stream limit (see +InitialSettings).
    var initialLimitRewritePending: Bool
    /// nghttp2 enforces the initial stream limit (from the start, or since the client acknowledged it).
    var initialLimitEnforced: Bool
    /// The validator raised or lowered the stream limit.
    var streamLimitChanged = false
    var acknowledgedSettingsCount = 0
    private var flushScheduled = false
    private lazy var flushWork: () -> Void = { [weak self] in self?.flush() }

    /// Accepts `socket` (ownership passes to the connection's TLS connection); the handshake runs as the
    /// client's messages arrive.
    static func accept(
        _ socket: Socket, listener: MockListener, enforcement: MockServer.InitialLimitEnforcement
    ) throws -> MockServerConnection {
        let connection = try MockServerConnection(listener: listener, enforcement: enforcement)
        connection.tls = try TLSConnection(
            acceptedSocket: socket, context: listener.tlsContext, loop: listener.loop, delegate: connection
        )
        return connection
    }

    private init(listener: MockListener, enforcement: MockServer.InitialLimitEnforcement) throws(HTTP2Error) {
        self.listener = listener
        self.loop = listener.loop
        let configuration = listener.validator.configuration
        let startingLimit = Self.startingLimit(configuration, enforcement)
        session = try HTTP2ServerSession(configuration: HTTP2ServerConfiguration(maxConcurrentStreams: startingLimit))
        initialLimitRewritePending = startingLimit != configuration.initialConcurrentStreams
        initialLimitEnforced = !initialLimitRewritePending
        state = MockConnectionState(id: 0, initialStreamLimit: configuration.initialConcurrentStreams)
        output.reserveCapacity(16 << 10)
    }

    // MARK: TLSConnectionDelegate

    func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo) {
        let certificate = info.peerCertificate.map(MockClientCertificate.init(peer:))
        state = listener.validator.openConnection(clientCertificate: certificate)
        flush()  // the server's SETTINGS
    }

    func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan) {
        guard !isFinished else { return }
        session.receive(bytes)
        if session.hasEvents { handleEvents() }
        scheduleFlush()
    }

    func tlsConnectionDidDrainOutput(_ connection: TLSConnection) {
        if session.wantsWrite { scheduleFlush() }
    }

    func tlsConnection(_ connection: TLSConnection, didCloseWith error: TransportError?) {
        finish(gracefully: false)
    }

    // MARK: Requests

    private func handleEvents() {
        session.drainEvents { event in
            guard !isFinished else { return }
            switch event {
            case .request(let incoming):
                // The validator reads the session's own field list and body; once answered, their storage
                // serves a later request.
                let request = MockRequest(incoming)
                let decision = listener.validator.handle(request, connection: &state)
                carryOut(decision, for: request)
                session.recycle(incoming)
            case .connectionError:
                finish(gracefully: false)
            case .settingsAcknowledged:
                settingsAcknowledged()
            case .streamClosed, .goawayReceived, .pingAcknowledged:
                break  // nghttp2 keeps the books; a late answer to a closed stream is simply not sent
            }
        }
    }

    // MARK: Output

    /// Queues a flush for the end of this loop turn (once, however many reads and timers led to it).
    func scheduleFlush() {
        guard !flushScheduled, !isFinished else { return }
        flushScheduled = true
        loop.executeNextTurn(flushWork)
    }

    /// Moves what nghttp2 has to send into the TLS connection and sends it; closes the connection (close_notify)
    /// once the HTTP/2 session has ended (GOAWAY sent and every stream at or below it answered, or the client
    /// went away).
    func flush() {
        flushScheduled = false
        guard !isFinished, let tls else { return }
        if tls.bufferedOutputCount < Self.outputHighWater {
            session.produceOutput(into: &output, limit: Self.outputHighWater)
            if initialLimitRewritePending, !output.isEmpty { announceInitialLimit() }
            if !output.isEmpty {
                tls.write(output)
                output.removeAll(keepingCapacity: true)
            }
        }
        tls.flush()
        if session.isClosed { finish(gracefully: true) }
    }

    /// Ends the connection: graceful sends what is queued, then close_notify; otherwise the socket closes at once
    /// (an injected drop, a protocol error, the server stopping).
    func finish(gracefully: Bool) {
        guard !isFinished else { return }
        isFinished = true
        for timer in delayedAnswers.values { timer.cancel() }
        delayedAnswers.removeAll()
        session.connectionClosed()
        if gracefully { tls?.close() } else { tls?.abort() }
        tls = nil
        listener.connectionEnded(self)
    }
}
