/// The lifecycle of one client connection and the timing of its requests, without I/O: which phase it is in, which
/// requests are open (and which provider token each carries), which are overdue, when a PING goes out and when an
/// unanswered one ends the connection. `APNSClientConnection` feeds it events with the time they happened and runs
/// what it returns; tests drive it with instants of their own.
struct ClientConnectionStateMachine {
    /// The connection's phase.
    enum State: Hashable, Sendable {
        /// TCP connect, proxy tunnel, TLS handshake.
        case connecting
        /// HTTP/2 is up and our preface sent; the server's first SETTINGS frame (its preface) has not arrived, so it
        /// cannot have processed any request yet.
        case awaitingSettings
        case ready
        /// Takes no new requests (GOAWAY, stream ids used up, the pool closing); closes once its requests end.
        case draining
        case closed
    }

    struct Timing: Hashable, Sendable {
        /// A request without an answer this long is cancelled.
        var requestTimeout: Double
        /// After this long without reading anything, a PING checks the connection is alive.
        var pingInterval: Double
        /// A PING unanswered this long ends the connection.
        var pingTimeout: Double
        /// The server's first SETTINGS frame (its HTTP/2 preface, due right after the handshake) not arrived this
        /// long after the handshake ends the connection: a server that completed TLS and then said nothing.
        var settingsTimeout: Double = 5
        /// While requests are open, this long without progress (no request answered or ended by the server) ends
        /// the connection: a server that stalls, drips its answers or never opens its flow-control window.
        /// Requests whose END_STREAM never left are then sent again elsewhere; the others are in doubt.
        var stallTimeout: Double = 5
    }

    /// What `tick` decided, in order.
    enum TickAction: Hashable, Sendable {
        /// Cancel the stream (RST_STREAM CANCEL) and report its request failed: its answer is overdue.
        case cancelRequest(tag: UInt64, streamID: Int32, tokenSerial: Int)
        /// It takes no new requests until something arrives from the server (flush the cancels, report the load).
        case suspend
        /// Send a PING with this payload.
        case sendPing(UInt64)
        /// Draining and nothing open: close gracefully.
        case close
        /// The PING went unanswered: drop the connection with this reason.
        case abort(String)
    }

    let timing: Timing
    private(set) var state: State = .connecting
    /// Whether the server answered at least one request on this connection: only then does it count as working
    /// (a server that ends every connection right after the handshake must not reset the reconnect back-off).
    private(set) var hadAnswer = false
    /// Set when a request timed out: no new requests until something arrives from the server.
    private(set) var awaitingSignOfLife = false
    /// The requests started and not yet reported, each with the serial of the provider token it carries.
    private(set) var openRequests = OpenRequestTable()
    /// Tags in the order their requests started, with when and on which stream; ended ones are skipped lazily.
    private var started: [(tag: UInt64, at: EventLoopInstant, streamID: Int32)] = []
    private var startedHead = 0
    private var lastReadAt: EventLoopInstant
    /// When the handshake completed (the server's SETTINGS are due from then), or when a request last ended
    /// (answered, or failed by the server), or started while none was open: the last sign of progress.
    private var lastProgressAt: EventLoopInstant
    private var handshakeCompletedAt: EventLoopInstant?
    private(set) var pingSentAt: EventLoopInstant?
    private var pingCounter: UInt64 = 0

    init(timing: Timing, now: EventLoopInstant) {
        self.timing = timing
        lastReadAt = now
        lastProgressAt = now
    }

    /// Whether requests may start: HTTP/2 is up, it is not draining, and no request timed out since the server
    /// last sent anything.
    var takesRequests: Bool { (state == .awaitingSettings || state == .ready) && !awaitingSignOfLife }

    /// Whether the server's first SETTINGS frame (its HTTP/2 preface) arrived: only then can it have processed a
    /// request, and only then is a TLS alert no longer part of the handshake. Stays true while draining and closed.
    private(set) var serverSpoke = false

    // MARK: - Events

    /// The TLS handshake is done; HTTP/2 starts. Returns false if the connection was not connecting.
    mutating func handshakeCompleted(now: EventLoopInstant) -> Bool {
        guard state == .connecting else { return false }
        state = .awaitingSettings
        lastReadAt = now
        lastProgressAt = now
        handshakeCompletedAt = now
        return true
    }

    /// Bytes arrived. Returns true when this ends a suspension (the connection takes requests again).
    mutating func received(now: EventLoopInstant) -> Bool {
        lastReadAt = now
        guard awaitingSignOfLife else { return false }
        awaitingSignOfLife = false
        return true
    }

    /// The server's SETTINGS arrived: from now on it may have processed what it was sent.
    mutating func settingsReceived() {
        serverSpoke = true
        if state == .awaitingSettings { state = .ready }
    }

    mutating func requestStarted(tag: UInt64, streamID: Int32, tokenSerial: Int, now: EventLoopInstant) {
        if openRequests.isEmpty { lastProgressAt = now }  // the stall clock runs only while requests wait
        openRequests.insert(tag, tokenSerial: tokenSerial)
        started.append((tag, now, streamID))
    }

    /// The request ended; returns its token serial, or nil for a tag not open (already reported). An answer proves
    /// the connection works.
    mutating func requestEnded(tag: UInt64, answered: Bool, now: EventLoopInstant) -> Int? {
        guard let serial = openRequests.remove(tag) else { return nil }
        if answered { hadAnswer = true }
        lastProgressAt = now
        return serial
    }

    /// Stops taking new streams (GOAWAY, stream ids used up, the pool closing). Returns false if it already had.
    mutating func drain() -> Bool {
        guard state == .connecting || state == .awaitingSettings || state == .ready else { return false }
        state = .draining
        return true
    }

    /// Whether a draining connection has nothing open any more and should close.
    var isDrained: Bool { state == .draining && openRequests.isEmpty }

    mutating func pingAcknowledged() { pingSentAt = nil }

    /// The PING `tick` asked for could not be submitted (the session is ending).
    mutating func pingNotSent() { pingSentAt = nil }

    /// The connection ended. Returns false if it had already. Requests the session still reports end as usual;
    /// `takeUnreportedRequests()` hands over the rest.
    mutating func close() -> Bool {
        guard state != .closed else { return false }
        state = .closed
        return true
    }

    /// The requests still open after the connection ended, by tag: the session did not report them (it always
    /// should), so they are reported in doubt (or not sent, if the server never spoke).
    mutating func takeUnreportedRequests() -> [(tag: UInt64, tokenSerial: Int)] {
        openRequests.removeAllSorted()
    }

    /// Called about once a second: cancels, oldest first, every request started more than `requestTimeout` ago and
    /// still open (each timeout is per request, the connection carries on), suspends the connection and sends a PING
    /// when it did, and checks liveness: a PING after `pingInterval` of silence, an abort when one is unanswered
    /// after `pingTimeout`.
    mutating func tick(now: EventLoopInstant) -> [TickAction] {
        guard state != .closed, state != .connecting else { return [] }
        var actions: [TickAction] = []
        while startedHead < started.count {
            let (tag, at, streamID) = started[startedHead]
            if let serial = openRequests.tokenSerial(of: tag) {
                guard now.seconds(since: at) > timing.requestTimeout else { break }
                _ = openRequests.remove(tag)
                actions.append(.cancelRequest(tag: tag, streamID: streamID, tokenSerial: serial))
            }
            startedHead += 1
        }
        if startedHead > Self.compactionThreshold, startedHead * 2 > started.count {
            started.removeFirst(startedHead)
            startedHead = 0
        }
        if !actions.isEmpty {
            awaitingSignOfLife = true
            if pingSentAt == nil { actions.append(nextPing(now: now)) }
            actions.append(.suspend)
            if isDrained {
                actions.append(.close)
                return actions
            }
        }
        // Checked whatever the phase: a connection told to drain before its server ever spoke is still one whose
        // server never sent its SETTINGS.
        if !serverSpoke, let handshake = handshakeCompletedAt, now.seconds(since: handshake) > timing.settingsTimeout {
            actions.append(.abort("the server completed TLS but sent no HTTP/2 SETTINGS in \(Self.seconds(timing.settingsTimeout))"))
            return actions
        }
        // Before the server spoke, the settings timeout governs (and names the cause); a stall needs a server that did.
        if serverSpoke, !openRequests.isEmpty, now.seconds(since: lastProgressAt) > timing.stallTimeout {
            actions.append(.abort(
                "the server answered none of \(openRequests.count) waiting requests (nor took their bodies) in "
                    + Self.seconds(timing.stallTimeout)))
            return actions
        }
        if let sent = pingSentAt {
            if now.seconds(since: sent) > timing.pingTimeout {
                actions.append(.abort("PING not answered within \(Int(timing.pingTimeout))s"))
            }
        } else if state == .ready || state == .awaitingSettings, now.seconds(since: lastReadAt) > timing.pingInterval {
            actions.append(nextPing(now: now))
        }
        return actions
    }

    private mutating func nextPing(now: EventLoopInstant) -> TickAction {
        pingCounter += 1
        pingSentAt = now
        return .sendPing(pingCounter)
    }

    /// "5 s", "0.5 s".
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// Ended entries at the head of the start order are dropped once there are this many and they are the majority.
    static let compactionThreshold = 1024
}
