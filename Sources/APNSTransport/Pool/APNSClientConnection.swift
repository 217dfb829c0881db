import APNSCore
import APNSHTTP2

/// One persistent HTTP/2-over-TLS connection to APNs: owns its TLS connection, its HTTP/2 session and the timer
/// that ticks its `ClientConnectionStateMachine`, runs what that machine decides, and reports every request's end
/// and its own to its pool.
///
/// A request that gets no answer within the timeout is cancelled alone (RST_STREAM CANCEL) and reported in doubt
/// (or not sent, if its HEADERS never left); the connection and its other requests carry on, but it takes no new
/// request until the server shows it is alive (anything read, or the PING sent at once), so a silent peer does
/// not collect fresh requests in the slots the cancels freed. A PING that gets no acknowledgement marks the whole
/// connection dead: it is aborted, and the HTTP/2 session reports each open stream as not sent or in doubt. Before
/// the server's first SETTINGS frame (its HTTP/2 preface) it cannot have processed any request, so requests open
/// when a connection dies that early are reported not sent.
///
/// When its stream ids near their end (`HTTP2ClientConfiguration.lastStreamID`) it stops taking new streams and
/// drains, like after a GOAWAY, and the pool opens a replacement.
final class APNSClientConnection: TLSConnectionDelegate {
    /// How often the machine is ticked (request timeouts and PINGs are checked), in seconds.
    static let tickInterval = 1.0
    /// How long a graceful close waits for the peer's close_notify before dropping the socket, in seconds.
    static let closeNotifyGracePeriod = 2.0
    /// The most bytes taken from the HTTP/2 session per TLS write.
    static let outputChunkBytes = 256 * 1024

    let id: ConnectionPoolStateMachine.ConnectionID
    private(set) var machine: ClientConnectionStateMachine
    private weak var owner: (any APNSClientConnectionOwner)?
    private let loop: EventLoop
    private let session: HTTP2ClientSession
    private var tls: TLSConnection?
    private var output: [UInt8] = []
    private var ticker: EventLoopTimer?

    init(
        id: ConnectionPoolStateMachine.ConnectionID, endpoint: APNSEndpoint, proxy: ProxyConfiguration?,
        context: TLSClientContext, http2: HTTP2ClientConfiguration, timing: ClientConnectionStateMachine.Timing,
        loop: EventLoop, owner: any APNSClientConnectionOwner
    ) throws(HTTP2Error) {
        self.id = id
        self.loop = loop
        self.owner = owner
        self.machine = ClientConnectionStateMachine(timing: timing, now: .now())
        self.session = try HTTP2ClientSession(configuration: http2)
        output.reserveCapacity(Self.outputChunkBytes)
        tls = TLSConnection.connect(
            host: endpoint.host, port: endpoint.port, proxy: proxy, context: context, loop: loop, delegate: self)
        scheduleTick()
    }

    /// Streams that may start here now, and the requests started and not yet ended.
    var load: ConnectionPoolStateMachine.Load {
        .init(available: machine.takesRequests ? session.availableStreamSlots : 0, inFlight: machine.openRequests.count)
    }

    /// Starts a request carrying the provider token numbered `tokenSerial` (0 without one); the bytes go out at
    /// the next `flush()`.
    func submit(
        block: HTTP2HeaderBlock?, fields: HTTP2HeaderFieldList, body: [UInt8], tag: UInt64, tokenSerial: Int = 0
    ) throws(HTTP2Error) {
        guard machine.takesRequests else { throw .sessionClosing }
        let streamID = try session.submitRequest(block: block, fields: fields, body: body, tag: tag)
        machine.requestStarted(tag: tag, streamID: streamID, tokenSerial: tokenSerial, now: loop.turnTime)
    }

    /// Hands what the session has to send to TLS and sends it.
    func flush() {
        guard let tls, machine.state != .closed else { return }
        writeSessionOutput(to: tls)
        tls.flush()
        if session.isClosed {
            finish(error: nil)
        } else if !session.acceptsNewStreams, machine.drain() {
            // Stream ids near their end: no new streams here; the pool opens a replacement, this one drains.
            owner?.connectionStoppedTakingStreams(self)
            if machine.isDrained { close() }
        }
    }

    /// Takes no new requests and closes once the open ones have ended (the pool is closing).
    func drain() {
        _ = machine.drain()
        if machine.isDrained { close() }
    }

    /// Ends the connection after telling the server (GOAWAY, close_notify). Requests still open are reported as
    /// not sent or in doubt.
    func close() {
        guard machine.state != .closed else { return }
        let connection = tls
        tls = nil  // finish() must not abort it: the GOAWAY and close_notify go out first
        if let connection {
            session.terminate()
            writeSessionOutput(to: connection)
            connection.close(gracePeriod: Self.closeNotifyGracePeriod)
        }
        finish(error: nil)
    }

    /// Ends the connection at once; requests still open are reported as not sent or in doubt.
    func abort(_ error: TransportError) {
        guard machine.state != .closed else { return }
        tls?.abort()
        tls = nil
        finish(error: error)
    }

    // MARK: - TLSConnectionDelegate

    func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo) {
        guard machine.handshakeCompleted(now: .now()) else { return }
        flush()  // the connection preface and our SETTINGS
        owner?.connectionBecameReady(self)
    }

    func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan) {
        if machine.received(now: loop.turnTime) { owner?.connectionLoadChanged(self) }
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

    private func writeSessionOutput(to connection: TLSConnection) {
        while true {
            output.removeAll(keepingCapacity: true)
            guard session.produceOutput(into: &output, limit: Self.outputChunkBytes) > 0 else { break }
            connection.write(output)
        }
    }

    private func deliverEvents() {
        var sessionError: HTTP2Error?
        session.drainEvents { event in
            switch event {
            case .response(let response):
                let first = !machine.hadAnswer
                guard let serial = machine.requestEnded(tag: response.tag, answered: true, now: loop.turnTime) else { return }
                if first { owner?.connectionAnswered(self) }
                owner?.connection(self, completed: response.tag, outcome: .answered(response.answer), tokenSerial: serial)
            case .streamFailed(let tag, _, let failure):
                guard let serial = machine.requestEnded(tag: tag, answered: false, now: loop.turnTime) else { return }
                owner?.connection(self, completed: tag, outcome: .failed(failure), tokenSerial: serial)
            case .goawayReceived:
                if machine.drain() { owner?.connectionStoppedTakingStreams(self) }
            case .remoteSettingsChanged:
                machine.settingsReceived()
                owner?.connectionLoadChanged(self)
            case .pingAcknowledged:
                machine.pingAcknowledged()
            case .connectionError(let error):
                sessionError = error  // the session is closed; its streams follow as .streamFailed
            }
        }
        guard machine.state != .closed else { return }
        if let sessionError {
            abort(TransportError(.http2ProtocolError, "\(sessionError)"))
        } else if session.isClosed || machine.isDrained {
            close()
        }
    }

    /// Reports every open request and the close, once.
    private func finish(error: TransportError?) {
        guard machine.close() else { return }
        ticker?.cancel()
        ticker = nil
        tls?.abort()
        tls = nil
        session.connectionClosed()
        deliverEvents()
        // Anything the session did not report (it always should) is in doubt rather than lost.
        for (tag, serial) in machine.takeUnreportedRequests() {
            let failure: TransportFailure = machine.serverSpoke
                ? .answerLost("connection closed") : .notSent("the connection ended before the server's SETTINGS")
            owner?.connection(self, completed: tag, outcome: .failed(failure), tokenSerial: serial)
        }
        owner?.connection(self, closedWith: error)
    }

    private func scheduleTick() {
        ticker = loop.schedule(after: Self.tickInterval) { [weak self] in self?.tick() }
    }

    /// Runs what the machine decides once a second: overdue requests cancelled, PINGs, a dead connection dropped.
    private func tick() {
        ticker = nil
        for action in machine.tick(now: .now()) {
            guard machine.state != .closed else { return }
            switch action {
            case .cancelRequest(let tag, let streamID, let serial):
                let wasSent = session.cancelRequest(streamID: streamID) ?? true
                let why = "no answer within \(Int(machine.timing.requestTimeout))s; stream cancelled"
                owner?.connection(
                    self, completed: tag, outcome: .failed(wasSent ? .answerLost(why) : .notSent(why)), tokenSerial: serial)
            case .suspend:
                flush()  // the RST_STREAMs
                guard machine.state != .closed else { return }
                owner?.connectionLoadChanged(self)
            case .sendPing(let payload):
                if (try? session.submitPing(payload: payload)) == nil { machine.pingNotSent() }
                flush()
            case .close:
                close()
            case .abort(let reason):
                abort(TransportError(.timeout, reason))
            }
        }
        guard machine.state != .closed else { return }
        scheduleTick()
    }
}

/// What an `APNSClientConnection` reports to the pool that owns it, on the event-loop thread.
protocol APNSClientConnectionOwner: AnyObject {
    /// A request ended: answered, or failed with what the connection knows about it. `tokenSerial` is the serial of
    /// the provider token the request carried (0 without one).
    func connection(
        _ connection: APNSClientConnection, completed tag: UInt64, outcome: PushOutcome,
        tokenSerial: Int)
    /// The handshake is done and HTTP/2 is up.
    func connectionBecameReady(_ connection: APNSClientConnection)
    /// The server answered a request on this connection for the first time: it works.
    func connectionAnswered(_ connection: APNSClientConnection)
    /// The server changed how many streams may be open, or the connection stopped or resumed taking requests after
    /// a request timeout: `connection.load` changed.
    func connectionLoadChanged(_ connection: APNSClientConnection)
    /// The connection stopped taking new streams on its own (GOAWAY, stream ids used up): it drains.
    func connectionStoppedTakingStreams(_ connection: APNSClientConnection)
    /// The connection is gone; every request it carried has been reported. `error` is nil for a clean close.
    func connection(_ connection: APNSClientConnection, closedWith error: TransportError?)
}
