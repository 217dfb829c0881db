import APNSCore
import APNSHTTP2

/// The lifecycle of one client connection and the timing of its requests, without I/O: which phase it is in, which
/// requests are open (and which provider token each carries), which are overdue, when a PING goes out and when an
/// unanswered one ends the connection. `APNSClientConnection` feeds it every event with the time it happened and
/// runs the actions each event returns (`Actions`, the project's one machine convention), after it returns; tests
/// drive it with instants of their own.
///
///     connecting ──handshakeCompleted──▶ awaitingSettings(Activity) ──settingsReceived──▶ ready(Activity)
///         │                                         │                                        │
///         │                                         └───drain: GOAWAY, stream ids used up,───┘
///         │ drain                                            the pool closing
///         │                                                         ▼
///         │                                                draining(Activity) ──its last request ended──┐
///         ▼                                                                                              │
///     ending(Ending, ServerSigns) ◀── close | abort | transportClosed, from any phase ◀──────────────────┘
///         │ the shell tore the transport and session down: teardownFinished
///         ▼
///     closed(ServerSigns)
///
/// An open connection (awaiting settings, ready, draining) carries its `Activity`: what its server has shown of
/// itself (its SETTINGS, an answer) and its liveness (a PING out, or suspended after a request timed out). While
/// `ending`, the session still reports the streams it held (`requestEnded`); `teardownFinished` then reports the
/// rest and the close, once.
struct ClientConnectionStateMachine {
    /// The connection's phase, each with what it knows.
    enum State: Hashable, Sendable {
        /// TCP connect, proxy tunnel, TLS handshake.
        case connecting
        /// HTTP/2 is up and our preface sent; the server's first SETTINGS frame (its preface) has not arrived, so it
        /// cannot have processed any request yet.
        case awaitingSettings(Activity)
        case ready(Activity)
        /// Takes no new requests (GOAWAY, stream ids used up, the pool closing); closes once its requests end.
        case draining(Activity)
        /// Being torn down this way (`Action.end`), with what the server had shown by then; the session's last
        /// reports come in.
        case ending(Ending, ServerSigns)
        /// Ended and reported, with what the server had shown by then (after its SETTINGS, requests it was sent may
        /// have been processed; after an answer, the connection had worked).
        case closed(ServerSigns)
    }

    /// What an open connection's server has shown of itself, and whether it is being checked.
    struct Activity: Hashable, Sendable {
        /// When the TLS handshake completed: the server's SETTINGS are due from then.
        var handshakeCompletedAt: EventLoopInstant
        /// What the server has said: nothing yet, its SETTINGS, or an answer to a request (then it works, and only
        /// then may the pool reset its reconnect back-off).
        var server: ServerSigns = .silent
        var liveness: Liveness = .quiet
    }

    /// How far the server has shown it speaks HTTP/2 and APNs, in the order it happens.
    enum ServerSigns: Int, Hashable, Comparable, Sendable {
        case silent, sentSettings, answered
        static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The server's first SETTINGS frame (its HTTP/2 preface) arrived: only then can it have processed a
        /// request, and only then is a TLS alert no longer part of the handshake.
        var spoke: Bool { self >= .sentSettings }
        /// The server answered at least one request: only then does the connection count as working (a server
        /// that ends every connection right after the handshake must not reset the reconnect back-off).
        var answered: Bool { self == .answered }
    }

    /// Whether the connection is being checked for life.
    enum Liveness: Hashable, Sendable {
        /// Nothing outstanding.
        case quiet
        /// A PING went out at this instant and is unanswered.
        case pinged(at: EventLoopInstant)
        /// A request timed out: no new requests until something arrives from the server. `pingedAt`: the PING
        /// sent then (nil when it could not be sent).
        case suspended(pingedAt: EventLoopInstant?)

        var pingSentAt: EventLoopInstant? {
            switch self {
            case .quiet: nil
            case .pinged(let at): at
            case .suspended(let at): at
            }
        }
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
        /// How often `tick` runs (request timeouts, PINGs and the timeouts above are checked), in seconds.
        var tickInterval: Double = 1
    }

    /// How a connection ends.
    enum Ending: Hashable, Sendable {
        /// We close it, telling the server (GOAWAY, close_notify).
        case close
        /// We drop it at once, for this reason.
        case abort(TransportError)
        /// The transport went away under it (the peer closed, a socket or TLS error; nil: a clean close).
        case transportClosed(TransportError?)

        /// What the pool hears the connection closed with: nil for a clean close.
        var error: TransportError? {
            switch self {
            case .close: nil
            case .abort(let error): error
            case .transportClosed(let error): error
            }
        }
    }

    /// What the connection does next; every event returns them and the connection runs them in order.
    enum Action: Hashable, Sendable {
        /// Start the request the owner submitted: hand it to the session, then tell the machine `requestStarted`.
        case startRequest
        /// Refuse the request the owner submitted: the connection takes none now (`HTTP2Error.sessionClosing`).
        case refuseRequest
        /// Hand our HTTP/2 preface to TLS, then tell the pool the connection is up.
        case announceReady
        /// Tell the pool the connection's load changed (streams it takes, requests open).
        case reportLoad
        /// Tell the pool the connection stopped taking new streams and drains, with what its server had shown and
        /// its requests open.
        case reportDraining(hadAnswer: Bool, inFlight: Int)
        /// Tell the pool a request ended with this outcome; `firstAnswer`: the connection's first answer (it works).
        case reportEnd(tag: UInt64, outcome: PushOutcome, tokenSerial: Int, firstAnswer: Bool)
        /// Cancel the stream (RST_STREAM CANCEL), then tell the machine `requestCancelled` with whether its HEADERS
        /// had left: its answer is overdue.
        case cancelRequest(tag: UInt64, streamID: Int32, tokenSerial: Int)
        /// Flush the cancels and tell the pool the connection takes no requests until the server shows it is alive.
        case suspend
        /// Send a PING with this payload (`pingNotSent` when the session cannot take it).
        case sendPing(UInt64)
        /// End the connection this way: stop its timer, end its transport and session (whose open streams are
        /// reported as they end, `requestEnded`), then tell the machine `teardownFinished`.
        case end(Ending)
        /// Tell the pool the connection is gone, every request it carried reported: `error` nil for a clean close,
        /// `server` what its server had shown.
        case reportClosed(error: TransportError?, server: ServerSigns)
    }

    /// What one event asks the connection to do, in order.
    typealias Actions = MachineActions<Action>

    let timing: Timing
    private(set) var state: State = .connecting
    /// The requests started and not yet reported, each with the serial of the provider token it carries.
    private(set) var openRequests = OpenRequestTable()
    /// Tags in the order their requests started, with when and on which stream; ended ones are skipped lazily.
    private var started: [(tag: UInt64, at: EventLoopInstant, streamID: Int32)] = []
    private var startedHead = 0
    private var lastReadAt: EventLoopInstant
    /// When the handshake completed, or when a request last ended (answered, or failed by the server), or started
    /// while none was open: the last sign of progress.
    private var lastProgressAt: EventLoopInstant
    private var pingCounter: UInt64 = 0

    init(timing: Timing, now: EventLoopInstant) {
        self.timing = timing
        lastReadAt = now
        lastProgressAt = now
    }

    // MARK: - Queries (for the pool's load and for tests; the connection decides nothing from them)

    /// The open connection's activity; nil while connecting and once ending.
    var activity: Activity? {
        switch state {
        case .awaitingSettings(let activity), .ready(let activity), .draining(let activity): activity
        case .connecting, .ending, .closed: nil
        }
    }

    /// Whether requests may start: HTTP/2 is up, it is not draining, and no request timed out since the server
    /// last sent anything.
    var takesRequests: Bool {
        switch state {
        case .awaitingSettings(let activity), .ready(let activity):
            if case .suspended = activity.liveness { return false }
            return true
        case .connecting, .draining, .ending, .closed:
            return false
        }
    }

    /// What the server has shown of itself so far, in any phase.
    var serverSigns: ServerSigns {
        switch state {
        case .ending(_, let signs), .closed(let signs): signs
        case .connecting, .awaitingSettings, .ready, .draining: activity?.server ?? .silent
        }
    }

    /// When the PING in flight went out, if one is.
    var pingSentAt: EventLoopInstant? { activity?.liveness.pingSentAt }

    // MARK: - Events

    /// The TLS handshake is done; HTTP/2 starts.
    mutating func handshakeCompleted(now: EventLoopInstant) -> Actions {
        guard case .connecting = state else { return .none }
        state = .awaitingSettings(Activity(handshakeCompletedAt: now))
        lastReadAt = now
        lastProgressAt = now
        return Actions(.announceReady)
    }

    /// Bytes arrived: they end a suspension (the connection takes requests again).
    mutating func received(now: EventLoopInstant) -> Actions {
        lastReadAt = now
        guard case .suspended(let pingedAt) = activity?.liveness else { return .none }
        updateActivity { $0.liveness = pingedAt.map { .pinged(at: $0) } ?? .quiet }
        return Actions(.reportLoad)
    }

    /// The server's SETTINGS arrived (its first: from now on it may have processed what it was sent; a later one:
    /// its stream limit may have changed).
    mutating func settingsReceived() -> Actions {
        switch state {
        case .awaitingSettings(var activity):
            activity.server = max(activity.server, .sentSettings)
            state = .ready(activity)
        case .ready, .draining:
            updateActivity { $0.server = max($0.server, .sentSettings) }
        case .connecting, .ending, .closed:
            return .none
        }
        return Actions(.reportLoad)
    }

    /// The owner submitted a request: start it if the connection takes requests now.
    mutating func requestSubmitted() -> Actions {
        Actions(takesRequests ? .startRequest : .refuseRequest)
    }

    /// The session took the request `startRequest` allowed, on `streamID`, carrying provider token `tokenSerial`.
    mutating func requestStarted(tag: UInt64, streamID: Int32, tokenSerial: Int, now: EventLoopInstant) -> Actions {
        if openRequests.isEmpty { lastProgressAt = now }  // the stall clock runs only while requests wait
        openRequests.insert(tag, tokenSerial: tokenSerial)
        started.append((tag, now, streamID))
        return .none
    }

    /// The request ended with `outcome` (answered, or failed as the session saw it); nothing for a tag not open
    /// (already reported). An answer proves the connection works.
    mutating func requestEnded(tag: UInt64, outcome: consuming PushOutcome, now: EventLoopInstant) -> Actions {
        guard let serial = openRequests.remove(tag) else { return .none }
        lastProgressAt = now
        var first = false
        if case .answered = outcome, !serverSigns.answered {
            first = true
            switch state {
            case .ending(let how, _): state = .ending(how, .answered)
            case .closed: state = .closed(.answered)
            case .connecting, .awaitingSettings, .ready, .draining: updateActivity { $0.server = .answered }
            }
        }
        return Actions(.reportEnd(tag: tag, outcome: consume outcome, tokenSerial: serial, firstAnswer: first))
    }

    /// The overdue request `cancelRequest` named was cancelled; `headersSent`: its HEADERS had left (then the
    /// server may have it: in doubt; else not sent).
    mutating func requestCancelled(tag: UInt64, tokenSerial: Int, headersSent: Bool) -> Actions {
        let why = "no answer within \(Int(timing.requestTimeout))s; stream cancelled"
        let failure: TransportFailure = headersSent ? .answerLost(why) : .notSent(why)
        return Actions(.reportEnd(tag: tag, outcome: .failed(failure), tokenSerial: tokenSerial, firstAnswer: false))
    }

    /// Why a connection stops taking new streams.
    enum DrainCause: Hashable, Sendable {
        /// The server sent GOAWAY; whether it is done is decided once the session's events are in
        /// (`sessionProgressed`).
        case goaway
        /// Its stream ids near their end: the pool opens a replacement.
        case streamIDsUsedUp
        /// The pool is closing (it knows; nothing to report).
        case poolClosing
    }

    /// Stops taking new streams. A connection still connecting has nothing open and closes.
    mutating func drain(_ cause: DrainCause) -> Actions {
        switch state {
        case .connecting:
            // Nothing can be open before the handshake.
            return cause == .poolClosing ? ending(.close) : [reportDraining()] + ending(.close)
        case .awaitingSettings(let activity), .ready(let activity):
            state = .draining(activity)
            switch cause {
            case .goaway: return Actions(reportDraining())
            case .streamIDsUsedUp: return [reportDraining()] + (openRequests.isEmpty ? ending(.close) : .none)
            case .poolClosing: return openRequests.isEmpty ? ending(.close) : .none
            }
        case .draining, .ending, .closed:
            return .none
        }
    }

    /// The session handed over what it had to say after input or a flush: `sessionError` ended it (its streams
    /// have been reported failed), or it `isClosed` (both sides said GOAWAY and nothing is open), or it takes no
    /// new streams (`!acceptsNewStreams`: its stream ids near their end). The one place that decides a connection
    /// is done: also a draining connection whose last request ended closes here.
    mutating func sessionProgressed(
        sessionError: HTTP2Error?, sessionClosed: Bool, acceptsNewStreams: Bool = true
    ) -> Actions {
        switch state {
        case .ending, .closed: return .none
        case .connecting, .awaitingSettings, .ready, .draining: break
        }
        if let sessionError { return ending(.abort(TransportError(.http2ProtocolError, "\(sessionError)"))) }
        if sessionClosed { return ending(.close) }
        if case .draining = state, openRequests.isEmpty { return ending(.close) }
        if !acceptsNewStreams { return drain(.streamIDsUsedUp) }
        return .none
    }

    /// The server acknowledged our PING.
    mutating func pingAcknowledged() -> Actions {
        pingSettled()
        return .none
    }

    /// The PING `sendPing` asked for could not be submitted (the session is ending).
    mutating func pingNotSent() -> Actions {
        pingSettled()
        return .none
    }

    /// Ends the connection `how`; nothing if it is ending or has ended already.
    mutating func end(_ how: Ending) -> Actions {
        switch state {
        case .ending, .closed: return .none
        case .connecting, .awaitingSettings, .ready, .draining: return ending(how)
        }
    }

    /// The shell ran `end`: the transport is gone and the session reported what it held. Requests still open
    /// were not reported by the session (it always should), so they are in doubt (or not sent, if the server never
    /// spoke); then the close is reported, once.
    mutating func teardownFinished() -> Actions {
        guard case .ending(let how, let signs) = state else { return .none }
        state = .closed(signs)
        let failure: TransportFailure =
            signs.spoke
            ? .answerLost("connection closed") : .notSent("the connection ended before the server's SETTINGS")
        var actions = Actions.none
        for request in openRequests.removeAllSorted() {
            actions.append(
                .reportEnd(
                    tag: request.tag, outcome: .failed(failure), tokenSerial: request.tokenSerial, firstAnswer: false))
        }
        actions.append(.reportClosed(error: how.error, server: signs))
        return actions
    }

    /// Called every `timing.tickInterval`: cancels, oldest first, every request started more than `requestTimeout`
    /// ago and still open (each timeout is per request, the connection carries on), suspends the connection and
    /// sends a PING when it did, and checks liveness: a PING after `pingInterval` of silence, an abort when one is
    /// unanswered after `pingTimeout`, the settings and stall timeouts.
    mutating func tick(now: EventLoopInstant) -> Actions {
        guard let activity else { return .none }
        var actions = Actions.none
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
            let pingedAt = activity.liveness.pingSentAt
            if pingedAt == nil { actions.append(nextPing(now: now)) }
            updateActivity { $0.liveness = .suspended(pingedAt: pingedAt ?? now) }
            actions.append(.suspend)
            if case .draining = state, openRequests.isEmpty {
                return actions + ending(.close)
            }
        }
        // Checked whatever the phase: a connection told to drain before its server ever spoke is still one whose
        // server never sent its SETTINGS.
        if !serverSigns.spoke, now.seconds(since: activity.handshakeCompletedAt) > timing.settingsTimeout {
            return actions
                + abort(
                    "the server completed TLS but sent no HTTP/2 SETTINGS in \(Self.seconds(timing.settingsTimeout))")
        }
        // Before the server spoke, the settings timeout governs (and names the cause); a stall needs a server that did.
        if serverSigns.spoke, !openRequests.isEmpty, now.seconds(since: lastProgressAt) > timing.stallTimeout {
            return actions
                + abort(
                    "the server answered none of \(openRequests.count) waiting requests (nor took their bodies) in "
                        + Self.seconds(timing.stallTimeout))
        }
        if let sent = self.activity?.liveness.pingSentAt {
            if now.seconds(since: sent) > timing.pingTimeout {
                return actions + abort("PING not answered within \(Int(timing.pingTimeout))s")
            }
        } else if case .draining = state {
            // a draining connection is not pinged: it closes once its requests end
        } else if now.seconds(since: lastReadAt) > timing.pingInterval {
            actions.append(nextPing(now: now))
        }
        return actions
    }

    // MARK: - Internals

    /// Moves to `ending`, keeping what the server had shown, and says how to end.
    private mutating func ending(_ how: Ending) -> Actions {
        state = .ending(how, serverSigns)
        return Actions(.end(how))
    }

    private mutating func abort(_ reason: String) -> Actions {
        end(.abort(TransportError(.timeout, reason)))
    }

    private func reportDraining() -> Action {
        .reportDraining(hadAnswer: serverSigns.answered, inFlight: openRequests.count)
    }

    /// No PING is in flight any more (a suspension stays until bytes arrive).
    private mutating func pingSettled() {
        switch activity?.liveness {
        case .pinged: updateActivity { $0.liveness = .quiet }
        case .suspended: updateActivity { $0.liveness = .suspended(pingedAt: nil) }
        case .quiet, nil: break
        }
    }

    private mutating func nextPing(now: EventLoopInstant) -> Action {
        pingCounter += 1
        if case .suspended = activity?.liveness {} else { updateActivity { $0.liveness = .pinged(at: now) } }
        return .sendPing(pingCounter)
    }

    /// Changes the open connection's activity in place, whatever its phase.
    private mutating func updateActivity(_ change: (inout Activity) -> Void) {
        switch state {
        case .awaitingSettings(var activity):
            change(&activity)
            state = .awaitingSettings(activity)
        case .ready(var activity):
            change(&activity)
            state = .ready(activity)
        case .draining(var activity):
            change(&activity)
            state = .draining(activity)
        case .connecting, .ending, .closed:
            break
        }
    }

    /// "5 s", "0.5 s".
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// Ended entries at the head of the start order are dropped once there are this many and they are the majority.
    static let compactionThreshold = 1024
}
