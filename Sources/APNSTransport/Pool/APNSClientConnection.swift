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
    /// How long a graceful close waits for the peer's close_notify before dropping the socket, in seconds.
    static let closeNotifyGracePeriod = 2.0
    /// The most bytes taken from the HTTP/2 session per TLS write.
    static let outputChunkBytes = 256 * 1024

    let id: ConnectionPoolStateMachine.ConnectionID
    @exclusivity(unchecked)
    private var machine: ClientConnectionStateMachine
    private weak var owner: (any APNSClientConnectionOwner)?
    private let loop: EventLoop
    private let session: HTTP2ClientSession
    @exclusivity(unchecked)
    private var tls: TLSConnection?
    @exclusivity(unchecked)
    private var output: [UInt8] = []
    @exclusivity(unchecked)
    private var ticker: EventLoopTimer?
    /// Actions of events that arrived while actions ran, in order (see `run`).
    @exclusivity(unchecked)
    private var queuedActions: [ClientConnectionStateMachine.Action] = []
    /// Whether `run` is running actions now.
    @exclusivity(unchecked)
    private var runningActions = false

    init(
        id: ConnectionPoolStateMachine.ConnectionID, endpoint: APNSEndpoint, proxy: ProxyConfiguration?,
        dialing: DialPlan, context: TLSClientContext, http2: HTTP2ClientConfiguration,
        timing: ClientConnectionStateMachine.Timing,
        loop: EventLoop, owner: any APNSClientConnectionOwner
    ) throws(HTTP2Error) {
        self.id = id
        self.loop = loop
        self.owner = owner
        self.machine = ClientConnectionStateMachine(timing: timing, now: loop.now())
        self.session = try HTTP2ClientSession(configuration: http2)
        output.reserveCapacity(Self.outputChunkBytes)
        tls = TLSConnection.connect(
            host: endpoint.host, port: endpoint.port, proxy: proxy, context: context, loop: loop, dialing: dialing,
            delegate: self)
        scheduleTick()
    }

    /// Streams that may start here now, and the requests started and not yet ended.
    var load: ConnectionPoolStateMachine.Load {
        .init(available: machine.takesRequests ? session.availableStreamSlots : 0, inFlight: machine.openRequests.count)
    }

    /// Starts a request carrying the provider token numbered `tokenSerial` (0 without one); the bytes go out at
    /// the next `flush()`. Throws `HTTP2Error.sessionClosing` when the connection takes no requests now.
    func submit(
        block: HTTP2HeaderBlock?, fields: HTTP2HeaderFieldList, body: [UInt8], tag: UInt64, tokenSerial: Int = 0
    ) throws(HTTP2Error) {
        // The machine's answer is this call's: run here, never queued behind a report that may have called us.
        try machine.requestSubmitted().consumeEach {
            (action: consuming ClientConnectionStateMachine.Action) throws(HTTP2Error) in
            switch action {
            case .startRequest:
                let streamID = try session.submitRequest(block: block, fields: fields, body: body, tag: tag)
                run(machine.requestStarted(tag: tag, streamID: streamID, tokenSerial: tokenSerial, now: loop.turnTime))
            case .refuseRequest:
                throw .sessionClosing
            default:
                run(ClientConnectionStateMachine.Actions(action))
            }
        }
    }

    /// Hands what the session has to send to TLS and sends it. Stream ids near their end: no new streams here;
    /// the pool opens a replacement, this one drains.
    func flush() {
        guard let tls else { return }  // torn down: nothing can be written
        writeSessionOutput(to: tls)
        tls.flush()
        if tls.state == .closed {
            // A write failed: TLS reports it on the next turn, but the connection ends now, so that no request
            // submitted meanwhile goes into the closed transport (it is refused: not sent, never in doubt).
            run(machine.end(.transportClosed(tls.closeErrorToldNextTurn)))
            return
        }
        run(
            machine.sessionProgressed(
                sessionError: nil, sessionClosed: session.isClosed, acceptsNewStreams: session.acceptsNewStreams))
    }

    /// Takes no new requests and closes once the open ones have ended (the pool is closing).
    func drain() {
        run(machine.drain(.poolClosing))
    }

    /// Ends the connection after telling the server (GOAWAY, close_notify). Requests still open are reported as
    /// not sent or in doubt.
    func close() {
        run(machine.end(.close))
    }

    /// Ends the connection at once; requests still open are reported as not sent or in doubt.
    func abort(_ error: TransportError) {
        run(machine.end(.abort(error)))
    }

    // MARK: - TLSConnectionDelegate

    func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo) {
        run(machine.handshakeCompleted(now: loop.now()))
    }

    func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan) {
        run(machine.received(now: loop.turnTime))
        session.receive(bytes)
        deliverEvents()
        flush()  // WINDOW_UPDATEs, SETTINGS and PING acknowledgements
    }

    func tlsConnectionDidDrainOutput(_ connection: TLSConnection) {
        flush()
    }

    func tlsConnection(_ connection: TLSConnection, didCloseWith error: TransportError?) {
        run(machine.end(.transportClosed(error)))
    }

    // MARK: - Actions

    /// Runs what the machine decided, in order, after it returned. An action can raise events (a cancel's outcome,
    /// the streams a teardown fails, a report whose owner calls back); the machine takes them at once, and their
    /// actions join the queue and run after the ones before them, by the call already running it: the connection
    /// never acts inside another action. A request the owner submits from inside a report starts at once
    /// (`submit`): the report is the last thing its action does.
    private func run(_ actions: consuming ClientConnectionStateMachine.Actions) {
        guard !runningActions else {  // the call running actions runs these after its own
            (consume actions).consumeEach { queuedActions.append($0) }
            return
        }
        runningActions = true
        (consume actions).consumeEach { perform($0) }
        if !queuedActions.isEmpty { runQueuedActions() }
        runningActions = false
    }

    /// Runs the actions of events raised while actions ran, in order, also those queued meanwhile.
    private func runQueuedActions() {
        var next = 0
        while next < queuedActions.count {
            var action = ClientConnectionStateMachine.Action.startRequest  // moved out, a no-op left in its place
            swap(&action, &queuedActions[next])
            perform(action)
            next += 1
        }
        queuedActions.removeAll(keepingCapacity: true)
    }

    private func perform(_ action: consuming ClientConnectionStateMachine.Action) {
        switch consume action {
        case .startRequest, .refuseRequest:
            break  // answers to `submit`, run there
        case .announceReady:
            flush()  // the connection preface and our SETTINGS
            owner?.connectionBecameReady(self)
        case .reportLoad:
            owner?.connectionLoadChanged(self)
        case .reportDraining(let hadAnswer, let inFlight):
            owner?.connectionStoppedTakingStreams(self, hadAnswer: hadAnswer, inFlight: inFlight)
        case .reportEnd(let tag, let outcome, let serial, let firstAnswer):
            if firstAnswer { owner?.connectionAnswered(self) }
            owner?.connection(self, completed: tag, outcome: consume outcome, tokenSerial: serial)
        case .cancelRequest(let tag, let streamID, let serial):
            let headersSent = session.cancelRequest(streamID: streamID) ?? true
            run(machine.requestCancelled(tag: tag, tokenSerial: serial, headersSent: headersSent))
        case .suspend:
            flush()  // the RST_STREAMs
            owner?.connectionLoadChanged(self)
        case .sendPing(let payload):
            if (try? session.submitPing(payload: payload)) == nil { run(machine.pingNotSent()) }
            flush()
        case .end(let how):
            tearDown(how)
        case .reportClosed(let error, let server):
            owner?.connection(self, closedWith: error, server: server)
        }
    }

    /// Ends the transport and the session `how`; the streams the session still held are reported failed as it
    /// ends them, then the machine hears `teardownFinished` (the machine returns `.end` once).
    private func tearDown(_ how: ClientConnectionStateMachine.Ending) {
        ticker?.cancel()
        ticker = nil
        switch how {
        case .close:
            if let connection = tls {  // the GOAWAY and close_notify go out first
                tls = nil
                session.terminate()
                writeSessionOutput(to: connection)
                connection.close(gracePeriod: Self.closeNotifyGracePeriod)
            }
        case .abort:
            tls?.abort()
        case .transportClosed:
            break
        }
        tls = nil
        session.connectionClosed()
        deliverEvents()
        run(machine.teardownFinished())
    }

    private func writeSessionOutput(to connection: TLSConnection) {
        while true {
            output.removeAll(keepingCapacity: true)
            guard session.produceOutput(into: &output, limit: Self.outputChunkBytes) > 0 else { break }
            connection.write(output)
        }
    }

    /// Feeds what the session reports to the machine and runs what it decides.
    private func deliverEvents() {
        var sessionError: HTTP2Error?
        session.drainEvents { event in
            switch event {
            case .response(let response):
                run(machine.requestEnded(tag: response.tag, outcome: .answered(response.answer), now: loop.turnTime))
            case .streamFailed(let tag, _, let failure):
                run(machine.requestEnded(tag: tag, outcome: .failed(failure), now: loop.turnTime))
            case .goawayReceived:
                run(machine.drain(.goaway))
            case .remoteSettingsChanged:
                run(machine.settingsReceived())
            case .pingAcknowledged:
                run(machine.pingAcknowledged())
            case .connectionError(let error):
                sessionError = error  // the session is closed; its streams follow as .streamFailed
            }
        }
        run(machine.sessionProgressed(sessionError: sessionError, sessionClosed: session.isClosed))
    }

    /// The next tick is scheduled before this one's actions run, so an action that ends the connection cancels it.
    private func scheduleTick() {
        ticker = loop.schedule(after: machine.timing.tickInterval) { [weak self] in self?.tick() }
    }

    /// Runs what the machine decides every tick: overdue requests cancelled, PINGs, a dead connection dropped.
    private func tick() {
        scheduleTick()
        run(machine.tick(now: loop.now()))
    }
}

/// What an `APNSClientConnection` reports to the pool that owns it, on the event-loop thread.
protocol APNSClientConnectionOwner: AnyObject {
    /// A request ended: answered, or failed with what the connection knows about it. `tokenSerial` is the serial of
    /// the provider token the request carried (0 without one).
    func connection(
        _ connection: APNSClientConnection, completed tag: UInt64, outcome: consuming PushOutcome,
        tokenSerial: Int)
    /// The handshake is done and HTTP/2 is up.
    func connectionBecameReady(_ connection: APNSClientConnection)
    /// The server answered a request on this connection for the first time: it works.
    func connectionAnswered(_ connection: APNSClientConnection)
    /// The server changed how many streams may be open, or the connection stopped or resumed taking requests after
    /// a request timeout: `connection.load` changed.
    func connectionLoadChanged(_ connection: APNSClientConnection)
    /// The connection stopped taking new streams on its own (GOAWAY, stream ids used up): it drains its
    /// `inFlight` requests. `hadAnswer`: its server answered at least one request.
    func connectionStoppedTakingStreams(_ connection: APNSClientConnection, hadAnswer: Bool, inFlight: Int)
    /// The connection is gone; every request it carried has been reported. `error` is nil for a clean close;
    /// `server`: what its server had shown of itself.
    func connection(
        _ connection: APNSClientConnection, closedWith error: TransportError?,
        server: ClientConnectionStateMachine.ServerSigns)
}
