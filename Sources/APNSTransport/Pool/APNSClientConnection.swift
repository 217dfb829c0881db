import APNSCore
import APNSHTTP2

/// One persistent HTTP/2-over-TLS connection to APNs: owns its TLS connection and HTTP/2 session, the order its
/// requests started in (for the request timeout), its liveness PING, and reports every request's end to its pool.
///
/// A request that gets no answer within the timeout is cancelled alone (RST_STREAM CANCEL) and reported in doubt
/// (or not sent, if its HEADERS never left); the connection and its other requests carry on, but it takes no new
/// request until the server shows it is alive (anything read, or the PING sent at once), so a silent peer does
/// not collect fresh requests in the slots the cancels freed. A PING that gets no
/// acknowledgement marks the whole connection dead: it is aborted, and the HTTP/2 session reports each open stream
/// as not sent or in doubt. Before the server's first SETTINGS frame (its HTTP/2 preface) it cannot have processed
/// any request, so requests open when a connection dies that early are reported not sent.
///
/// When its stream ids near their end (`HTTP2ClientConfiguration.lastStreamID`) it stops taking new streams and
/// drains, like after a GOAWAY, and the pool opens a replacement.
final class APNSClientConnection: TLSConnectionDelegate {
    enum State: Equatable {
        case connecting, ready, draining, closed
    }

    struct Timing {
        var requestTimeout: Double
        var pingInterval: Double
        var pingTimeout: Double
    }

    /// Bytes taken from the HTTP/2 session per TLS write.
    static let outputChunkLimit = 256 * 1024

    let id: Int
    private(set) var state: State = .connecting
    /// Whether the server answered at least one request on this connection: only then does it count as working
    /// (a server that ends every connection right after the handshake must not reset the reconnect back-off).
    private(set) var hadAnswer = false
    private weak var owner: (any APNSClientConnectionOwner)?
    private let loop: EventLoop
    private let timing: Timing
    private let session: HTTP2ClientSession
    private var tls: TLSConnection?
    private var output: [UInt8] = []
    /// Tags in the order their requests started, with when and on which stream; ended ones are skipped lazily.
    private var started: [(tag: UInt64, at: EventLoopInstant, streamID: Int32)] = []
    private var startedHead = 0
    /// The requests started and not yet reported, each with the serial of the provider token it carries.
    private var openTags: [UInt64: Int] = [:]
    private var ticker: EventLoopTimer?
    private var lastReadAt = EventLoopInstant.now()
    private var pingSentAt: EventLoopInstant?
    private var pingCounter: UInt64 = 0
    /// Set when a request timed out: no new requests until something arrives from the server.
    private var awaitingSignOfLife = false
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
    var availableSlots: Int { state == .ready && !awaitingSignOfLife ? session.availableStreamSlots : 0 }
    /// Requests started and not yet ended.
    var inFlightCount: Int { openTags.count }
    /// Whether the server's first SETTINGS frame (its HTTP/2 connection preface) arrived: only then can it have
    /// processed a request, and only then is a TLS alert no longer part of the handshake.
    var serverSpoke: Bool { session.streamSlots.hasReceivedPeerSettings }

    /// Starts a request carrying the provider token numbered `tokenSerial` (0 without one); the bytes go out at
    /// the next `flush()`.
    func submit(
        block: HTTP2HeaderBlock?, fields: HTTP2HeaderFieldList, body: [UInt8], tag: UInt64, tokenSerial: Int = 0
    ) throws(HTTP2Error) {
        guard state == .ready else { throw .sessionClosing }
        let streamID = try session.submitRequest(block: block, fields: fields, body: body, tag: tag)
        openTags[tag] = tokenSerial
        started.append((tag, EventLoopInstant.now(), streamID))
    }

    /// Hands what the session has to send to TLS and sends it.
    func flush() {
        guard let tls, state != .closed else { return }
        while true {
            output.removeAll(keepingCapacity: true)
            let produced = session.produceOutput(into: &output, limit: Self.outputChunkLimit)
            guard produced > 0 else { break }
            tls.write(output)
        }
        tls.flush()
        if session.isClosed {
            finish(error: nil)
        } else if state == .ready, !session.acceptsNewStreams {
            // Stream ids near their end: no new streams here; the pool opens a replacement, this one drains.
            state = .draining
            owner?.connectionSlotsChanged(self)
            if openTags.isEmpty { close(abort: false, reason: "stream ids used up") }
        }
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
                guard session.produceOutput(into: &output, limit: Self.outputChunkLimit) > 0 else { break }
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
        lastReadAt = EventLoopInstant.now()
        flush()  // the connection preface and our SETTINGS
        owner?.connectionBecameReady(self)
    }

    func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan) {
        lastReadAt = EventLoopInstant.now()
        if awaitingSignOfLife {
            awaitingSignOfLife = false
            owner?.connectionSlotsChanged(self)
        }
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
                guard let serial = openTags.removeValue(forKey: response.tag) else { return }
                hadAnswer = true
                owner?.connection(self, completed: response.tag, outcome: .answered(response.answer), tokenSerial: serial)
            case .streamFailed(let tag, _, let failure):
                guard let serial = openTags.removeValue(forKey: tag) else { return }
                owner?.connection(self, completed: tag, outcome: .failed(failure.transportFailure), tokenSerial: serial)
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
        let unprocessed = !serverSpoke
        for (tag, serial) in openTags.sorted(by: { $0.key < $1.key }) {
            let failure: TransportFailure = unprocessed
                ? .notSent("the connection ended before the server's SETTINGS") : .answerLost("connection closed")
            owner?.connection(self, completed: tag, outcome: .failed(failure), tokenSerial: serial)
        }
        openTags.removeAll()
        owner?.connection(self, closedWith: error)
    }

    /// Once a second: cancels the requests unanswered for longer than the request timeout, and the PING.
    private func tick() {
        ticker = nil
        guard state != .closed else { return }
        let now = EventLoopInstant.now()
        cancelOverdueRequests(now: now)
        guard state != .closed else { return }
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

    /// Cancels, oldest first, every request started more than `requestTimeout` ago and still open: RST_STREAM
    /// CANCEL for its stream, reported in doubt (not sent, if its HEADERS never left). A timeout is per request.
    private func cancelOverdueRequests(now: EventLoopInstant) {
        var cancelled = false
        while startedHead < started.count {
            let (tag, at, streamID) = started[startedHead]
            if let serial = openTags[tag] {
                guard now.seconds(since: at) > timing.requestTimeout else { break }
                openTags[tag] = nil
                let wasSent = session.cancelRequest(streamID: streamID) ?? true
                let why = "no answer within \(Int(timing.requestTimeout))s; stream cancelled"
                let failure: TransportFailure = wasSent ? .answerLost(why) : .notSent(why)
                cancelled = true
                owner?.connection(self, completed: tag, outcome: .failed(failure), tokenSerial: serial)
                guard state != .closed else { return }
            }
            startedHead += 1
        }
        if startedHead > 1024, startedHead * 2 > started.count {
            started.removeFirst(startedHead)
            startedHead = 0
        }
        if cancelled {
            awaitingSignOfLife = true
            if pingSentAt == nil {
                pingCounter += 1
                if (try? session.submitPing(payload: pingCounter)) != nil { pingSentAt = now }
            }
            flush()
            if state == .draining, openTags.isEmpty { close(abort: false, reason: "drained") }
            owner?.connectionSlotsChanged(self)
        }
    }
}
