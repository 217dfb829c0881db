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
    @exclusivity(unchecked)
    private(set) var tls: TLSConnection?
    let session: HTTP2ServerSession
    /// The validator's view of the connection; a placeholder until the handshake completes.
    @exclusivity(unchecked)
    var state: MockConnectionState
    @exclusivity(unchecked)
    var responseFields = HTTP2HeaderFieldList(reservingFields: 2, bytes: 128)
    @exclusivity(unchecked)
    var output: [UInt8] = []
    /// Answers waiting for their latency timer, by stream id, with the accepted-log line of a 200.
    @exclusivity(unchecked)
    var delayedAnswers: [Int32: (timer: EventLoopTimer, logLine: [UInt8]?)] = [:]
    @exclusivity(unchecked)
    private(set) var isFinished = false
    /// The first output still has to be rewritten to announce the initial stream limit (see +InitialSettings).
    @exclusivity(unchecked)
    var initialLimitRewritePending: Bool
    /// nghttp2 enforces the initial stream limit (from the start, or since the client acknowledged it).
    @exclusivity(unchecked)
    var initialLimitEnforced: Bool
    /// The validator raised or lowered the stream limit.
    @exclusivity(unchecked)
    var streamLimitChanged = false
    @exclusivity(unchecked)
    var acknowledgedSettingsCount = 0
    @exclusivity(unchecked)
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
        for (_, (timer, logLine)) in delayedAnswers.sorted(by: { $0.key < $1.key }) {
            timer.cancel()
            // Accepted, never answered: still logged, as APNs would have processed the notification.
            if let logLine { _ = listener.acceptedLog?.append(MockAcceptedLog.unanswered(logLine)) }
        }
        delayedAnswers.removeAll()
        session.connectionClosed()
        if gracefully { tls?.close() } else { tls?.abort() }
        tls = nil
        listener.connectionEnded(self)
    }
}

// MARK: - InitialSettings

/// The first stream limit. The server's first SETTINGS announces `initialConcurrentStreams` (1), but a client
/// may open streams before that frame reaches it: RFC 9113 (sections 5.1.2 and 6.5.3) lets a limit bind only
/// once the peer has it, and h2load or a pool that opens 100 streams right after the handshake would otherwise
/// see them refused. So, under `.onceAcknowledged`, nghttp2 starts with the full limit (nothing is refused) while
/// the frame on the wire is rewritten to say the initial limit; once the client acknowledges that frame, the
/// session refuses streams over the initial limit itself (`refuseStreams(over:)`, no second SETTINGS: a client
/// such as h2spec waits for the ACK of its own SETTINGS there) from then on, unless the validator has changed the
/// limit meanwhile. Under `.immediately` nghttp2 refuses streams over the initial
/// limit from the start (REFUSED_STREAM), which tests a client's resending.
extension MockServerConnection {
    /// What the HTTP/2 session announces to nghttp2 at start: the limit nghttp2 enforces before the first ACK.
    static func startingLimit(_ configuration: MockConfiguration, _ enforcement: MockServer.InitialLimitEnforcement)
        -> Int
    {
        switch enforcement {
        case .onceAcknowledged: return configuration.maxConcurrentStreams
        case .immediately: return configuration.initialConcurrentStreams
        }
    }

    /// Rewrites SETTINGS_MAX_CONCURRENT_STREAMS in the first frame of `output` (the server's first SETTINGS) to
    /// `limit`. False when the bytes are not the expected SETTINGS frame with that entry.
    static func rewriteFirstSettings(_ output: inout [UInt8], maxConcurrentStreams limit: Int) -> Bool {
        let headerLength = 9
        guard output.count >= headerLength, output[3] == 0x04, output[4] & 0x01 == 0,
            output[5] | output[6] | output[7] | output[8] == 0
        else { return false }
        let length = Int(output[0]) << 16 | Int(output[1]) << 8 | Int(output[2])
        guard length % 6 == 0, output.count >= headerLength + length, let value = UInt32(exactly: limit) else {
            return false
        }
        var entry = headerLength
        var rewritten = false
        while entry < headerLength + length {
            if output[entry] == 0x00, output[entry + 1] == 0x03 {
                output[entry + 2] = UInt8(truncatingIfNeeded: value >> 24)
                output[entry + 3] = UInt8(truncatingIfNeeded: value >> 16)
                output[entry + 4] = UInt8(truncatingIfNeeded: value >> 8)
                output[entry + 5] = UInt8(truncatingIfNeeded: value)
                rewritten = true
            }
            entry += 6
        }
        return rewritten
    }

    /// Called with the first output of the session: puts the initial limit on the wire.
    func announceInitialLimit() {
        initialLimitRewritePending = false
        let initial = listener.validator.configuration.initialConcurrentStreams
        guard !Self.rewriteFirstSettings(&output, maxConcurrentStreams: initial) else { return }
        // Not the frame expected: announce and enforce the initial limit the plain way.
        try? session.setMaxConcurrentStreams(initial)
        initialLimitEnforced = true
    }

    /// The client acknowledged one of our SETTINGS frames (in order).
    func settingsAcknowledged() {
        acknowledgedSettingsCount += 1
        guard acknowledgedSettingsCount == 1, !initialLimitEnforced, !streamLimitChanged else { return }
        initialLimitEnforced = true
        // The limit is on the wire already (the rewritten first SETTINGS): enforced here, with no second frame.
        session.refuseStreams(over: listener.validator.configuration.initialConcurrentStreams)
    }
}

// MARK: - Actions

/// Carrying out a `MockDecision`: the answer (now, or after an injected delay) and each connection action, as
/// `MockConnectionAction` documents them.
extension MockServerConnection {
    func carryOut(_ decision: MockDecision, for request: MockRequest) {
        let streamID = request.streamID
        if let response = decision.response {
            var logLine: [UInt8]?
            if response.status == 200, listener.acceptedLog != nil {
                logLine = MockAcceptedLog.line(
                    for: request, apnsID: response.apnsID, uniqueID: response.uniqueID, connection: state.id)
            }
            if let delay = Self.delay(in: decision.actions) {
                answer(streamID, response, logging: logLine, afterMilliseconds: delay)
            } else {
                answer(streamID, response, logging: logLine)
            }
        }
        for action in decision.actions {
            switch action {
            case .raiseStreamLimit(let limit), .lowerStreamLimit(let limit):
                streamLimitChanged = true
                try? session.setMaxConcurrentStreams(limit)  // fails only when the session has ended
            case .goaway(let lastStreamID, let errorCode, let debugData):
                // Graceful: streams at or below lastStreamID are still answered (delayed ones included); the
                // session ends once they are, and `flush` then closes the connection with close_notify.
                try? session.sendGoaway(
                    lastStreamID: lastStreamID, errorCode: HTTP2ErrorCode(rawValue: errorCode), debugData: debugData
                )
            case .dropConnection:
                finish(gracefully: false)
                return
            case .refuseStream:
                try? session.resetStream(streamID, errorCode: .refusedStream)
            case .delay:
                break  // applied to the answer above
            }
        }
    }

    /// Submits the answer to nghttp2: `:status`, `apns-id`, `apns-unique-id` when present, and the body. An
    /// accepted answer is first logged (`--log-accepted`); if the log cannot be written it becomes a 500.
    func answer(_ streamID: Int32, _ response: MockResponse, logging logLine: [UInt8]? = nil) {
        var response = response
        if let logLine, let log = listener.acceptedLog, !log.append(logLine) {
            response = .rejected(.internalServerError, apnsID: response.apnsID)
        }
        responseFields.removeAll()
        responseFields.append(name: "apns-id", value: response.apnsID.bytes)
        if let uniqueID = response.uniqueID { responseFields.append(name: "apns-unique-id", value: uniqueID.bytes) }
        // Throws only when the stream is gone (reset by the client, cut off by GOAWAY): nothing to answer.
        try? session.respond(to: streamID, status: response.status, fields: responseFields, body: response.body)
    }

    /// Holds the answer back with a timer; other streams are served meanwhile. Equal delays fire in the order
    /// they were scheduled, so a fixed latency keeps the answers in request order.
    private func answer(
        _ streamID: Int32, _ response: MockResponse, logging logLine: [UInt8]?, afterMilliseconds milliseconds: Int
    ) {
        let timer = loop.schedule(after: Double(milliseconds) / 1000) { [weak self] in
            guard let self, !self.isFinished else { return }
            self.delayedAnswers.removeValue(forKey: streamID)
            self.answer(streamID, response, logging: logLine)
            self.scheduleFlush()
        }
        delayedAnswers[streamID] = (timer, logLine)
    }

    private static func delay(in actions: [MockConnectionAction]) -> Int? {
        for action in actions {
            if case .delay(let milliseconds) = action { return milliseconds }
        }
        return nil
    }
}
