import APNSCore

/// One persistent HTTP/2-over-TLS connection to APNs: owns its TLS connection and HTTP/2 session, the order its
/// requests started in (for the request timeout), its liveness PING, and reports every request's end to its pool.
///
/// A request that gets no answer within the timeout, or a PING that gets no acknowledgement, marks the whole
/// connection dead: it is aborted, and the HTTP/2 session reports each open stream as not sent or in doubt.
final class APNSClientConnection: TLSConnectionDelegate {
    enum State: Equatable {
        case connecting, ready, draining, closed
    }

    struct Timing {
        var requestTimeout: Double
        var pingInterval: Double
        var pingTimeout: Double
    }

    let id: Int
    private(set) var state: State = .connecting
    private(set) var wasReady = false
    /// Whether the server answered at least one request on this connection: only then does it count as working
    /// (a server that ends every connection right after the handshake must not reset the reconnect back-off).
    private(set) var hadAnswer = false
    private weak var owner: (any APNSClientConnectionOwner)?
    private let loop: EventLoop
    private let timing: Timing
    private let session: HTTP2ClientSession
    private var tls: TLSConnection?
    private var output: [UInt8] = []
    /// Tags in the order their requests started, with when; answered tags are skipped lazily.
    private var started: [(tag: UInt64, at: EventLoopInstant)] = []
    private var startedHead = 0
    private var openTags = Set<UInt64>()
    private var ticker: EventLoopTimer?
    private var lastReadAt = EventLoopInstant.now()
    private var pingSentAt: EventLoopInstant?
    private var pingCounter: UInt64 = 0
    private var reportedClose = false

    init(
        id: Int, endpoint: APNSEndpoint, proxy: ProxyConfiguration?, context: TLSClientContext,
        http2: HTTP2ClientConfiguration, timing: Timing, loop: EventLoop, owner: any APNSClientConnectionOwner
    ) throws(HTTP2Error) {
        self.id = id
        self.loop = loop
        self.timing = timing
        self.owner = owner
        self.session = try HTTP2ClientSession(configuration: http2)
        output.reserveCapacity(64 * 1024)
        tls = TLSConnection.connect(
            host: endpoint.host, port: endpoint.port, proxy: proxy, context: context, loop: loop, delegate: self)
        ticker = loop.schedule(after: 1) { [weak self] in self?.tick() }
    }

    /// Streams that may start on this connection now.
    var availableSlots: Int { state == .ready ? session.availableStreamSlots : 0 }
    /// Requests started and not yet ended.
    var inFlightCount: Int { openTags.count }

    /// Starts a request; the bytes go out at the next `flush()`.
    func submit(block: HTTP2HeaderBlock?, fields: HTTP2HeaderFieldList, body: [UInt8], tag: UInt64) throws(HTTP2Error) {
        guard state == .ready else { throw .sessionClosing }
        try session.submitRequest(block: block, fields: fields, body: body, tag: tag)
        openTags.insert(tag)
        started.append((tag, EventLoopInstant.now()))
    }

    /// Hands what the session has to send to TLS and sends it.
    func flush() {
        guard let tls, state != .closed else { return }
        while true {
            output.removeAll(keepingCapacity: true)
            let produced = session.produceOutput(into: &output, limit: 256 * 1024)
            guard produced > 0 else { break }
            tls.write(output)
        }
        tls.flush()
        if session.isClosed { finish(error: nil) }
    }

    /// Ends the connection: at once if `abort`, else after telling the server (GOAWAY, close_notify).
    /// Requests still open are reported as not sent or in doubt.
    func close(abort: Bool, reason: String, kind: TransportError.Kind = .timeout) {
        guard state != .closed else { return }
        let connection = tls
        tls = nil  // finish() must not abort it: a graceful close sends GOAWAY and close_notify first
        if abort {
            connection?.abort()
        } else if let connection {
            session.terminate()
            while true {
                output.removeAll(keepingCapacity: true)
                guard session.produceOutput(into: &output, limit: 256 * 1024) > 0 else { break }
                connection.write(output)
            }
            connection.close(gracePeriod: 2)
        }
        finish(error: abort ? TransportError(kind, reason) : nil)
    }

    // MARK: - TLSConnectionDelegate

    func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo) {
        guard state == .connecting else { return }
        state = .ready
        wasReady = true
        lastReadAt = EventLoopInstant.now()
        flush()  // the connection preface and our SETTINGS
        owner?.connectionBecameReady(self)
    }

    func tlsConnection(_ connection: TLSConnection, didReceive bytes: UnsafeRawBufferPointer) {
        lastReadAt = EventLoopInstant.now()
        session.receive(bytes)
        deliverEvents()
        flush()  // WINDOW_UPDATEs, SETTINGS and PING acknowledgements
    }

    func tlsConnectionDidDrainOutput(_ connection: TLSConnection) {
        flush()
    }

    func tlsConnection(_ connection: TLSConnection, didCloseWith error: TransportError?) {
        tls = nil
        finish(error: error)
    }

    // MARK: - Internals

    private func deliverEvents() {
        var sessionError: HTTP2Error?
        session.drainEvents { event in
            switch event {
            case .response(let response):
                guard openTags.remove(response.tag) != nil else { return }
                hadAnswer = true
                let answer = response.answer
                owner?.connection(self, completed: response.tag, outcome: answer.outcome, answer: answer)
            case .streamFailed(let tag, _, let failure):
                guard openTags.remove(tag) != nil else { return }
                owner?.connection(self, completed: tag, outcome: .failed(failure.transportFailure), answer: nil)
            case .goawayReceived:
                if state == .ready { state = .draining }
                owner?.connectionSlotsChanged(self)
            case .remoteSettingsChanged:
                owner?.connectionSlotsChanged(self)
            case .pingAcknowledged:
                pingSentAt = nil
            case .connectionError(let error):
                sessionError = error  // the session is closed; its streams follow as .streamFailed
            }
        }
        if let sessionError {
            close(abort: true, reason: "\(sessionError)", kind: .http2ProtocolError)
        } else if session.isClosed || (state == .draining && openTags.isEmpty) {
            close(abort: false, reason: "drained after GOAWAY")
        }
    }

    /// Reports every open request and the close, once.
    private func finish(error: TransportError?) {
        guard !reportedClose else { return }
        reportedClose = true
        state = .closed
        ticker?.cancel()
        ticker = nil
        tls?.abort()
        tls = nil
        session.connectionClosed()
        deliverEvents()
        // Anything the session did not report (it always should) is in doubt rather than lost.
        for tag in openTags.sorted() {
            owner?.connection(self, completed: tag, outcome: .failed(.answerLost("connection closed")), answer: nil)
        }
        openTags.removeAll()
        owner?.connection(self, closedWith: error)
    }

    /// Once a second: the oldest unanswered request's age, and the PING.
    private func tick() {
        ticker = nil
        guard state != .closed else { return }
        let now = EventLoopInstant.now()
        while startedHead < started.count, !openTags.contains(started[startedHead].tag) { startedHead += 1 }
        if startedHead > 1024, startedHead * 2 > started.count {
            started.removeFirst(startedHead)
            startedHead = 0
        }
        if startedHead < started.count, now.seconds(since: started[startedHead].at) > timing.requestTimeout {
            close(abort: true, reason: "no answer within \(Int(timing.requestTimeout))s")
            return
        }
        if let sent = pingSentAt {
            if now.seconds(since: sent) > timing.pingTimeout {
                close(abort: true, reason: "PING not answered within \(Int(timing.pingTimeout))s")
                return
            }
        } else if state == .ready, now.seconds(since: lastReadAt) > timing.pingInterval {
            pingCounter += 1
            if (try? session.submitPing(payload: pingCounter)) != nil {
                pingSentAt = now
                flush()
            }
        }
        ticker = loop.schedule(after: 1) { [weak self] in self?.tick() }
    }
}
