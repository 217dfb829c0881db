import APNSCore
import APNSCrypto
import APNSHTTP2

/// The pool's decisions without I/O: the state of each of its connections, which one takes the next request, when a
/// connection is replaced and after what delay, when the pool gives up, and when it has closed. `APNSClientPool`
/// feeds it what its connections and timers report and runs the actions it returns.
///
/// The pool has `maximumConnections` places (slots), each holding one connection, waiting to open one, or idle. It
/// widens rather than deepens: no connection carries more than `streamsPerConnection` requests (so a dropped one
/// puts at most that many in doubt); `initialConnections` open at the start, a stagger apart, and more open as what
/// is in flight grows (`widenIfNeeded`: room kept well ahead of what is in flight, as far as the sender's window
/// may reach: `expectInFlight`), spares kept warm, and the last one closed when it has idled (`closeIdleSpare`);
/// requests are packed onto few connections (`requestSubmitted`). A connection that stops taking new streams (GOAWAY, stream ids
/// used up) leaves its slot, finishes what it has among the `retired` ones, and its slot opens a replacement. A
/// slot's states (`ConnectionState`):
///
///     idle ──widenIfNeeded──┐
///                           ▼
///     backingOff(attempts) ──open timer──▶ starting(id, attempts) ──connectionReady──▶ active(id, load, attempts)
///        ▲   ▲                                   │                                        │        │
///        │   └───────connectionClosed: back off and reopen, unless the pool gives up ─────┘        │
///        └──────────connectionStoppedTakingStreams (GOAWAY, ids used up): the connection retires ──┘
///
///     closeRequested: idle, backingOff ──▶ closed; starting, active ──▶ draining(id, inFlight) ──connectionClosed──▶ closed
///
/// A slot backing off with no attempt counted (a staggered first open, an answered connection's replacement) also
/// opens at `widenIfNeeded`, its timer cancelled, before an idle slot does.
///
/// The pool as a whole is its `Lifecycle` (running, failed, closing, closed), drawn on that type; the rules are in
/// docs/ARCHITECTURE.md, "The connection pool".
struct ConnectionPoolStateMachine {
    /// Names one connection for its whole life; a replacement gets a new id.
    struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
        let value: Int
        var description: String { "#\(value)" }
    }

    /// What a ready connection last reported: streams it may start now, and its requests not yet ended.
    struct Load: Hashable, Sendable {
        var available: Int
        var inFlight: Int
    }

    /// One slot's connection.
    enum ConnectionState: Hashable, Sendable {
        /// Never opened yet: opens when the pool needs more room (`widenIfNeeded`).
        case idle
        /// Waiting for a timer before opening: the staggered first open (`attempts` 0), or a reconnect after
        /// `attempts` connections in a row ended without an answer.
        case backingOff(attempts: Int)
        /// Connecting: TCP, TLS, HTTP/2 preface. Takes no requests yet.
        case starting(ConnectionID, attempts: Int)
        /// Ready: takes requests while `load.available > 0`.
        case active(ConnectionID, load: Load, attempts: Int)
        /// The pool is closing, or the slot, an idle spare, goes back to idle (`closeIdleSpare`): takes no new
        /// requests; the connection closes once its requests have ended.
        case draining(ConnectionID, inFlight: Int)
        /// No connection, and none will open: the pool closed, or gave up.
        case closed
    }

    /// The timers the pool runs for the machine; each fires `timerFired`.
    enum Timer: Hashable, Sendable {
        /// Opens the slot's next connection (stagger or back-off).
        case open(slot: Int)
        /// The end of `close(gracePeriod:)`: connections still open are aborted.
        case closeDeadline
        /// `failureWindow` seconds after the first of the connections in a row that failed: every slot waiting to
        /// reconnect tries once more at once, and the first connection opened from then on that fails too gives up
        /// (a brief outage is ridden out, a broken server ends the run one connection attempt later).
        case failureWindow
        /// Every `closeIdleAfter` seconds: the last slot in use, when its connection carried no request since the
        /// last check and the others have room enough without it, closes and goes back to idle (`closeIdleSpare`).
        case idleCheck
    }

    /// What the pool does next; every event returns them (`Actions`) and the pool runs them in order.
    enum Action: Hashable, Sendable {
        /// Start the request the pool was given (`requestSubmitted`) on this connection, then tell the machine the
        /// connection's new load (`requestStartedOrEnded`).
        case startRequest(on: ConnectionID)
        /// Fail the request the pool was given, never sent: no connection takes it, for this reason.
        case refuseRequest(String)
        /// Opens a connection with this id.
        case open(ConnectionID)
        case schedule(Timer, after: Double)
        case cancel(Timer)
        /// Takes no new requests on the connection; it closes by itself once its open requests end.
        case drain(ConnectionID)
        /// Closes the connection now, telling the server (GOAWAY, close_notify); nothing is open on it.
        case close(ConnectionID)
        /// Drops the connection now; its open requests are reported as not sent or in doubt.
        case abort(ConnectionID)
        /// Streams may have become free: the delegate hears `transportHasFreeSlots`.
        case reportFreeStreams
        /// The transport cannot work: the delegate hears `transportFailed`, once.
        case reportFailure(Failure)
        /// Everything is closed: the delegate hears `transportDidClose`.
        case reportClosed
    }

    /// What one event asks the pool to do, in order.
    typealias Actions = MachineActions<Action>

    /// Why the pool cannot go on.
    enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// Its connections: a handshake no reconnect can cure, too many failed in a row, or APNs declaring fresh
        /// provider tokens expired (the clock is wrong).
        case transport(TransportError)
        /// The provider token could not be signed.
        case providerToken(CryptoError)
        /// A header block or an HTTP/2 session could not be built.
        case http2(HTTP2Error)

        /// The error the delegate hears.
        var error: any Error {
            switch self {
            case .transport(let error): error
            case .providerToken(let error): error
            case .http2(let error): error
            }
        }

        var description: String { "\(error)" }
    }

    /// Where the pool stands as a whole:
    ///
    ///     running ──failed──▶ failed(Failure)
    ///        │                   │ (connections still replaced; no new requests)
    ///        ├───────────────────┴──closeRequested──▶ closing(deadlineScheduled) ──every connection closed──▶ closed
    ///        │                                           │  ▲ a grace period: the closeDeadline timer runs
    ///        │                                           └──┘ its end, or a second closeRequested(0): what is open is aborted
    enum Lifecycle: Hashable, Sendable {
        /// Taking requests, replacing connections that end.
        case running
        /// It cannot go on (reported once, by `reportFailure`): it takes no new request and waits to be closed.
        case failed(Failure)
        /// Taking no new requests; connections drain. `deadlineScheduled`: the closeDeadline timer runs.
        case closing(deadlineScheduled: Bool)
        /// Every connection closed and `reportClosed` returned.
        case closed
    }

    private(set) var lifecycle = Lifecycle.running
    private(set) var slots: [ConnectionState]
    /// Connections that left their slot (GOAWAY, stream ids used up) and finish their open requests: in flight on each.
    private(set) var retired: [ConnectionID: Int] = [:]
    /// Connections that ended without an answer, over the whole pool, since the last answer anywhere, whatever
    /// slot they were in: named in the message that gives up.
    private(set) var failuresInARow = 0
    /// Whether `failureWindow` seconds have passed since the first of `failuresInARow`.
    private(set) var failureWindowOver = false
    /// The first connection id opened after `failureWindow` ended (ids grow): one of these that fails without an
    /// answer gives up. Nil while the window runs.
    private var firstConnectionAfterWindow: Int?
    /// What the last failed connection met, for the message that gives up.
    private(set) var lastFailure: TransportError?
    /// Seconds a row of failed connections lasts before the pool gives up, whatever its size: the rule in
    /// `replaceConnection` and docs/ARCHITECTURE.md, "The connection pool".
    let failureWindow: Double
    /// Whether each slot's connection has been answered on: the connections that prove the pool works, and the
    /// ones `requestSubmitted` packs onto. Reset when the slot opens a connection; read only for active slots.
    private var answeredSlots: [Bool]
    let stagger: Double
    /// Freshly signed provider tokens declared expired on first use, in a row, that end the pool: the clock is wrong.
    let stopAfterTokensExpiredOnFirstUse: Int
    let reconnect: ExponentialBackoff
    /// The requests a connection carries at most while an idle slot is left (see the type's comment).
    let streamsPerConnection: Int
    /// The room `widenIfNeeded` keeps, per request in flight (see there).
    let roomPerRequestInFlight: Int
    /// The most requests the sender expects to keep in flight until it says otherwise (`expectInFlight`): the
    /// room `widenIfNeeded` keeps stops one share beyond it. `Int32.max` (no limit) until the sender says.
    private(set) var expectedInFlight = Int(Int32.max)
    /// Seconds between checks for an idle spare to close (`closeIdleSpare`); nil never closes one.
    let closeIdleAfter: Double?
    /// The idle spare closing, whose slot goes back to idle when it has closed.
    private(set) var retiringIdle: ConnectionID?
    /// Whether the last slot in use carried a request since the last `idleCheck`.
    private var lastSlotCarried = false
    /// Slots never opened: always the last ones (`widenIfNeeded` opens the first idle slot), so the slots in use
    /// are `slots[..<(slots.count - idleSlots)]`.
    private(set) var idleSlots: Int
    private var random: any RandomNumberGenerator
    private var nextID = 0
    /// The slot `requestSubmitted` tries first.
    private var current = 0
    /// Whether a ready connection that has not answered may be without a request: set when one becomes ready or
    /// its last request ends, cleared when `requestSubmitted` finds none. Such a connection goes first.
    private var mayAwaitFirstRequest = false

    /// - Parameters:
    ///   - maximumConnections: the slots; `initialConnections` of them open at `start()` (all of them by default).
    ///   - streamsPerConnection: requests a connection carries at most while the pool can still widen.
    ///   - roomPerRequestInFlight: the room kept per request in flight (`widenIfNeeded`).
    ///   - closeIdleAfter: seconds between checks for an idle spare to close; nil or not positive keeps every
    ///     connection open.
    ///   - failureWindow, stopAfterTokensExpiredOnFirstUse: from `APNSClientConfiguration`, where their defaults are.
    init(
        maximumConnections: Int, initialConnections: Int? = nil, streamsPerConnection: Int = Int.max,
        roomPerRequestInFlight: Int = 8, closeIdleAfter: Double? = nil, stagger: Double,
        reconnect: ExponentialBackoff, failureWindow: Double, stopAfterTokensExpiredOnFirstUse: Int,
        random: any RandomNumberGenerator = SystemRandomNumberGenerator()
    ) {
        self.closeIdleAfter = closeIdleAfter.flatMap { $0 > 0 ? $0 : nil }  // not positive: never (no busy timer)
        self.stopAfterTokensExpiredOnFirstUse = max(1, stopAfterTokensExpiredOnFirstUse)
        let maximum = max(1, maximumConnections)
        let initial = min(maximum, max(1, initialConnections ?? maximum))
        slots =
            Array(repeating: .backingOff(attempts: 0), count: initial)
            + Array(repeating: .idle, count: maximum - initial)
        idleSlots = maximum - initial
        answeredSlots = Array(repeating: false, count: maximum)
        self.streamsPerConnection = max(1, streamsPerConnection)
        self.roomPerRequestInFlight = max(1, roomPerRequestInFlight)
        self.stagger = stagger
        self.failureWindow = failureWindow
        self.reconnect = reconnect
        self.random = random
    }

    // MARK: - Queries

    /// Whether the pool has been asked to close (it takes no new requests and opens no connection).
    var isClosing: Bool {
        switch lifecycle {
        case .running, .failed: false
        case .closing, .closed: true
        }
    }

    /// Why `requestSubmitted()` found no connection for a request.
    private var whyNoConnection: String {
        if case .failed = lifecycle { return "the client stopped after a fatal error" }
        return "no connection has a free stream"
    }

    /// Connections that are ready and not draining.
    var activeConnectionCount: Int {
        slots.reduce(0) { count, state in
            if case .active = state { return count + 1 }
            return count
        }
    }

    /// Streams that may start now, over every ready connection; none while closing.
    var freeStreams: Int {
        guard !isClosing else { return 0 }
        var total = 0
        for slot in 0..<usedSlots {
            if case .active(_, let load, _) = slots[slot] { total += room(on: load) }
        }
        return total
    }

    /// The slots opened at least once; the idle ones follow them.
    private var usedSlots: Int { slots.count - idleSlots }

    /// Streams a ready connection may start now: what its server allows, and no more than `streamsPerConnection`
    /// in flight (what a dropped connection puts in doubt).
    @inline(__always)
    private func room(on load: Load) -> Int {
        min(max(0, load.available), max(0, streamsPerConnection - load.inFlight))
    }

    // MARK: - Events

    /// The pool was given a request: start it on a ready connection with room, packing onto connections the server has answered on: the one the last request
    /// went to while it has room, else the next with room in slot order. Each turn's requests then go out on few
    /// connections (fewer writes on both sides), the others stay warm spares, and none carries more than its
    /// share. Until a connection has answered, requests spread instead (the next pick starts after it): a ready
    /// connection without an answer and without a request gets the next request before any other (at its first
    /// stream limit of one, that request lets its server raise it: it carries its share one round trip later, not
    /// after waiting for the answered connections to fill up first), and a server that answers nothing fails on
    /// every connection at once, not on one after another. The pool then starts the request there and reports the
    /// connection's new load (`requestStartedOrEnded`).
    mutating func requestSubmitted() -> Actions {
        // Once the pool has reported that it cannot go on (the delegate hears it on the next turn), nothing more
        // goes out: a request submitted in between, such as the retry of the answer that made it give up, would
        // otherwise carry a token re-signed for nothing, or be sent after the decision to stop.
        guard case .running = lifecycle else { return Actions(.refuseRequest(whyNoConnection)) }
        let used = usedSlots
        if mayAwaitFirstRequest {
            for slot in 0..<used where !answeredSlots[slot] {
                if case .active(let id, let load, _) = slots[slot], load.inFlight == 0, room(on: load) > 0 {
                    return Actions(.startRequest(on: id))
                }
            }
            mayAwaitFirstRequest = false
        }
        var index = current < used ? current : 0
        for _ in 0..<used {
            let next = index + 1 == used ? 0 : index + 1
            if case .active(let id, let load, _) = slots[index], room(on: load) > 0 {
                current = answeredSlots[index] ? index : next
                return Actions(.startRequest(on: id))
            }
            index = next
        }
        return Actions(.refuseRequest(whyNoConnection))
    }

    /// Opens the first connection now and the other initial ones `stagger` seconds apart.
    mutating func start() -> Actions {
        var actions = Actions.none
        for slot in slots.indices {
            guard case .backingOff(attempts: 0) = slots[slot] else { continue }
            let delay = Double(slot) * stagger
            actions += delay == 0 ? open(slot, attempts: 0) : [.schedule(.open(slot: slot), after: delay)]
        }
        if let closeIdleAfter { actions.append(.schedule(.idleCheck, after: closeIdleAfter)) }
        return actions
    }

    /// The connection's handshake is done and HTTP/2 is up.
    mutating func connectionReady(_ id: ConnectionID, load: Load) -> Actions {
        guard let slot = slot(of: id), case .starting(_, let attempts) = slots[slot] else { return .none }
        slots[slot] = .active(id, load: load, attempts: attempts)
        current = slot
        mayAwaitFirstRequest = true
        return [.reportFreeStreams]
    }

    /// The server answered on the connection for the first time: the pool works, the failures in a row start over.
    mutating func connectionAnswered(_ id: ConnectionID) -> Actions {
        if let slot = slot(of: id) { answeredSlots[slot] = true }
        guard failuresInARow > 0 else { return .none }
        failuresInARow = 0
        failureWindowOver = false
        firstConnectionAfterWindow = nil
        return [.cancel(.failureWindow)]
    }

    /// The connection's load changed: the server's SETTINGS changed its stream limit, or it stopped or resumed
    /// taking requests after a request timeout.
    mutating func loadChanged(_ id: ConnectionID, load: Load) -> Actions {
        _ = requestStartedOrEnded(id, load: load)
        guard let slot = slot(of: id), case .active = slots[slot] else { return .none }
        return [.reportFreeStreams]
    }

    /// A request started on the connection, or ended (the delegate hears its outcome from the pool): the load the
    /// connection reports now (a start can take more than one stream slot away: the last stream id).
    mutating func requestStartedOrEnded(_ id: ConnectionID, load: Load) -> Actions {
        if retired[id] != nil {
            retired[id] = load.inFlight
            return .none
        }
        guard let slot = slot(of: id) else { return .none }
        switch slots[slot] {
        case .active(_, _, let attempts):
            slots[slot] = .active(id, load: load, attempts: attempts)
            if load.inFlight == 0, !answeredSlots[slot] { mayAwaitFirstRequest = true }
            if load.inFlight > 0, slot == usedSlots - 1 { lastSlotCarried = true }
        case .draining: slots[slot] = .draining(id, inFlight: load.inFlight)
        case .idle, .backingOff, .starting, .closed: break
        }
        return .none
    }

    /// The sender's in-flight window says how far it may grow before it says otherwise (`reach`): the room kept
    /// from now on stops one share beyond it (the spare a dropped connection needs). Read by the next
    /// `widenIfNeeded`, after the round's submits.
    mutating func expectInFlight(atMost reach: Int) -> Actions {
        expectedInFlight = min(Int(Int32.max), max(0, reach))
        return .none
    }

    /// Opens slots while the room left on the connections (their free streams, and a full share for each one
    /// still connecting or not answered on yet) is less than `roomPerRequestInFlight` times what is in flight on
    /// them, or less than one share: called after each round of submits. A new connection carries its share about
    /// three round trips after it opens (TCP, TLS, a first request that lets the server raise its stream limit),
    /// while the in-flight window may quadruple per round trip as it grows: the room opens ahead of it. Never
    /// beyond what the sender expects in flight (`expectInFlight`) and one share more: on loopback, where the
    /// window's slow start stopped at 256, that rule alone opened 18 connections for the 3 the window could fill,
    /// each a TLS handshake and a provider-token check at APNs. A slot waiting for its staggered first open opens
    /// now before an idle one does. Idle connections cost nothing a request (requests are packed). Only while the
    /// pool works (an open connection has answered, no connection has failed since the last answer): a broken
    /// server is met by the back-off of the slots in use, not by fresh connections.
    mutating func widenIfNeeded() -> Actions {
        guard case .running = lifecycle, failuresInARow == 0 else { return .none }
        let (room, inFlight) = roomAndInFlight(inSlotsBelow: usedSlots)
        let wanted = wantedRoom(inFlight: inFlight)
        guard room < wanted, anyConnectionAnswering else { return .none }
        var missing = (wanted - room + streamsPerConnection - 1) / streamsPerConnection
        var actions = Actions.none
        for slot in 0..<usedSlots where missing > 0 {
            guard case .backingOff(attempts: 0) = slots[slot] else { continue }
            actions.append(.cancel(.open(slot: slot)))
            actions += open(slot, attempts: 0)
            missing -= 1
        }
        for _ in 0..<min(idleSlots, missing) {
            let slot = usedSlots
            idleSlots -= 1
            actions += open(slot, attempts: 0)
        }
        return actions
    }

    /// The room left on the slots below `end` (free streams, a full share for a connection still connecting or not
    /// answered on yet) and the requests in flight on them.
    private func roomAndInFlight(inSlotsBelow end: Int) -> (room: Int, inFlight: Int) {
        var room = 0
        var inFlight = 0
        for slot in 0..<end {
            switch slots[slot] {
            case .active(_, let load, _):
                inFlight += load.inFlight
                // A connection the server has not answered on yet may still be at its first stream limit (APNs
                // allows one stream until a request with a valid token went through): it counts for its share.
                room += answeredSlots[slot] ? self.room(on: load) : max(0, streamsPerConnection - load.inFlight)
            case .starting: room += streamsPerConnection
            case .idle, .backingOff, .draining, .closed: break
            }
        }
        return (room, inFlight)
    }

    /// The room `widenIfNeeded` keeps for `inFlight` requests: `roomPerRequestInFlight` times as many, no further
    /// than one share beyond what the sender expects, one share at least.
    private func wantedRoom(inFlight: Int) -> Int {
        let ahead = max(0, expectedInFlight - inFlight) + streamsPerConnection
        return max(streamsPerConnection, min(roomPerRequestInFlight * inFlight, ahead))
    }

    /// The `idleCheck`: closes the last slot in use when its connection has answered, has nothing in flight, carried
    /// no request since the last check, and the slots below it keep the room `widenIfNeeded` wants (so one share
    /// for a drop stays); its slot goes back to idle once it has closed. One a check, the last first: requests are
    /// packed onto the first slots, so the last ones are the spares that never carry their share.
    private mutating func closeIdleSpare() -> Actions {
        let last = usedSlots - 1
        guard case .running = lifecycle, retiringIdle == nil, failuresInARow == 0, last > 0, !lastSlotCarried,
            case .active(let id, let load, _) = slots[last], load.inFlight == 0, answeredSlots[last]
        else { return .none }
        let (room, inFlight) = roomAndInFlight(inSlotsBelow: last)
        guard room >= wantedRoom(inFlight: inFlight) else { return .none }
        slots[last] = .draining(id, inFlight: 0)
        retiringIdle = id
        return [.close(id)]
    }

    mutating func timerFired(_ timer: Timer) -> Actions {
        switch timer {
        case .open(let slot):
            guard slots.indices.contains(slot), !isClosing, case .backingOff(let attempts) = slots[slot] else {
                return .none
            }
            return open(slot, attempts: attempts)
        case .closeDeadline:
            guard case .closing = lifecycle else { return .none }
            lifecycle = .closing(deadlineScheduled: false)
            return closeRequested(gracePeriod: 0)
        case .failureWindow:
            guard failuresInARow > 0 else { return .none }
            failureWindowOver = true
            firstConnectionAfterWindow = nextID
            return isClosing ? [] : lastTries()
        case .idleCheck:
            guard case .running = lifecycle, let closeIdleAfter else { return .none }
            var actions: Actions = [.schedule(.idleCheck, after: closeIdleAfter)]
            actions += closeIdleSpare()
            lastSlotCarried = false
            return actions
        }
    }

    private mutating func open(_ slot: Int, attempts: Int) -> Actions {
        let id = ConnectionID(value: nextID)
        nextID += 1
        slots[slot] = .starting(id, attempts: attempts)
        answeredSlots[slot] = false
        return [.open(id)]
    }

    func slot(of id: ConnectionID) -> Int? {
        slots.firstIndex { state in
            switch state {
            case .starting(let current, _), .active(let current, _, _), .draining(let current, _): return current == id
            case .idle, .backingOff, .closed: return false
            }
        }
    }
}

// MARK: - Lifecycle

extension ConnectionPoolStateMachine {
    /// How a connection left its slot.
    enum Ending: Hashable, Sendable {
        /// It stopped taking new streams (GOAWAY, stream ids used up) and drains among the retired ones.
        case retired
        /// It closed; `serverSpoke`: the server's first SETTINGS frame (its HTTP/2 preface) had arrived.
        case closed(TransportError?, serverSpoke: Bool)
    }

    /// The connection stopped taking new streams (a GOAWAY, or its stream ids near their end): it finishes its
    /// `inFlight` requests on the side, and its slot opens a replacement. `hadAnswer`: the server answered at least
    /// one request on it.
    mutating func connectionStoppedTakingStreams(_ id: ConnectionID, hadAnswer: Bool, inFlight: Int) -> Actions {
        guard !isClosing, let slot = slot(of: id) else { return .none }
        let attempts: Int
        switch slots[slot] {
        case .starting(_, let previous), .active(_, _, let previous): attempts = previous
        case .idle, .backingOff, .draining, .closed: return .none
        }
        retired[id] = inFlight
        return replaceConnection(id, inSlot: slot, attempts: attempts, hadAnswer: hadAnswer, ending: .retired)
    }

    /// The connection closed; every request it carried has been reported. `error` is nil for a clean close.
    mutating func connectionClosed(
        _ id: ConnectionID, error: TransportError?, hadAnswer: Bool, serverSpoke: Bool
    ) -> Actions {
        if retired.removeValue(forKey: id) != nil { return reportClosedIfDone() }
        guard let slot = slot(of: id) else { return .none }
        if id == retiringIdle {
            retiringIdle = nil
            if !isClosing, slot == usedSlots - 1 {  // still the last in use: back to idle, opened again when needed
                slots[slot] = .idle
                idleSlots += 1
                return .none
            }
        }
        let attempts: Int
        switch slots[slot] {
        case .starting(_, let previous), .active(_, _, let previous): attempts = previous
        case .idle, .draining, .backingOff, .closed: attempts = 0
        }
        if isClosing {
            slots[slot] = .closed
            return reportClosedIfDone()
        }
        return replaceConnection(
            id, inSlot: slot, attempts: attempts, hadAnswer: hadAnswer, ending: .closed(error, serverSpoke: serverSpoke)
        )
    }

    /// A connection could not even be set up (its HTTP/2 session could not be created): the slot stays empty and
    /// the pool reports that error.
    mutating func openFailed(_ id: ConnectionID) -> Actions {
        guard let slot = slot(of: id) else { return .none }
        slots[slot] = .closed
        return reportClosedIfDone()
    }

    /// The pool cannot go on: it takes no new request, and the delegate hears why, once. Ignored once closing (the
    /// run is ending anyway).
    mutating func failed(_ failure: Failure) -> Actions {
        guard case .running = lifecycle else { return .none }
        lifecycle = .failed(failure)
        return [.reportFailure(failure)]
    }

    /// APNs declared a provider token expired: `onFirstUseInARow` freshly signed tokens in a row were declared
    /// expired before any was accepted. At `stopAfterTokensExpiredOnFirstUse` the pool gives up with
    /// `clockProblem` (what the tokens' `iat` and this host's time were): re-signing cannot cure a wrong clock.
    mutating func providerTokenExpired(onFirstUseInARow count: Int, clockProblem: String?) -> Actions {
        guard count >= stopAfterTokensExpiredOnFirstUse, let clockProblem else { return .none }
        return failed(.transport(TransportError(.providerTokenRejected, clockProblem)))
    }

    /// Stops taking new requests. Connections with nothing open close now; the others drain, and after
    /// `gracePeriod` seconds (at once for 0) whatever is still open is aborted and reported in doubt.
    mutating func closeRequested(gracePeriod: Double) -> Actions {
        var actions = Actions.none
        switch lifecycle {
        case .running, .failed:
            for slot in slots.indices {
                switch slots[slot] {
                case .idle:
                    slots[slot] = .closed
                case .backingOff:
                    slots[slot] = .closed
                    actions.append(.cancel(.open(slot: slot)))
                case .starting, .active, .draining, .closed:
                    break
                }
            }
            idleSlots = 0
            if closeIdleAfter != nil { actions.append(.cancel(.idleCheck)) }
        case .closing(deadlineScheduled: true):
            actions.append(.cancel(.closeDeadline))
        case .closing(deadlineScheduled: false):
            break
        case .closed:
            return .none
        }
        lifecycle = .closing(deadlineScheduled: false)
        let now = gracePeriod <= 0
        for slot in slots.indices {
            switch slots[slot] {
            case .starting(let id, _):
                slots[slot] = .draining(id, inFlight: 0)
                actions.append(.close(id))
            case .active(let id, let load, _):
                slots[slot] = .draining(id, inFlight: load.inFlight)
                actions.append(load.inFlight == 0 ? .close(id) : now ? .abort(id) : .drain(id))
            case .draining(let id, let inFlight):
                if now { actions.append(inFlight == 0 ? .close(id) : .abort(id)) }
            case .idle, .backingOff, .closed:
                break
            }
        }
        for (id, inFlight) in retired.sorted(by: { $0.key.value < $1.key.value }) where now || inFlight == 0 {
            actions.append(inFlight == 0 ? .close(id) : .abort(id))
        }
        if !now {
            lifecycle = .closing(deadlineScheduled: true)
            actions.append(.schedule(.closeDeadline, after: gracePeriod))
        }
        return actions + reportClosedIfDone()
    }

    /// The one reconnect decision, for a connection that closed or retired: a handshake failure no reconnect can
    /// cure ends the pool; so does a row of connections over the pool that ended without an answer (refused, a
    /// failed handshake, no SETTINGS, a stall, a protocol error, a close) once it has lasted `failureWindow`
    /// seconds, when a connection opened after that fails too and no open connection answers, naming what the
    /// last one met. Time decides, not a count: one slot meets as few failures in the window as its back-off
    /// allows, 64 meet many, and both give up one connection attempt after the window. Otherwise the slot opens a
    /// new connection, at once after a connection that had answered, else after the back-off delay (a connection
    /// that never answered counts as a failed attempt, so a server that drops every connection right after the
    /// handshake does not reset the back-off).
    private mutating func replaceConnection(
        _ id: ConnectionID, inSlot slot: Int, attempts previous: Int, hadAnswer: Bool, ending: Ending
    ) -> Actions {
        let attempts = hadAnswer ? 0 : previous + 1
        slots[slot] = .backingOff(attempts: attempts)
        if case .closed(let error?, serverSpoke: false) = ending, Self.isPermanent(error) {
            slots[slot] = .closed
            return failed(.transport(error))
        }
        var actions = Actions.none
        if !hadAnswer {
            switch ending {
            case .retired: lastFailure = TransportError(.closedByPeer, "every connection ended without an answer")
            case .closed(let error, _):
                lastFailure =
                    error ?? TransportError(.closedByPeer, "the server closed the connection without answering")
            }
            failuresInARow += 1
            if failuresInARow == 1 {
                failureWindowOver = false
                firstConnectionAfterWindow = nil
                actions.append(.schedule(.failureWindow, after: failureWindow))
            }
            if let failure = givingUp(after: id) {
                slots[slot] = .closed
                return actions + failed(.transport(failure))
            }
            // Opened before the window ended, it failed after: the verdict waits for a connection opened since,
            // so the slot tries again at once instead of backing off up to `reconnect.cap`.
            if failureWindowOver, !anyConnectionAnswering {
                return actions + [.schedule(.open(slot: slot), after: 0), .reportFreeStreams]
            }
        }
        // A connection that had answered reopens at once, however it ended (GOAWAY, a reset, a close): the server
        // worked, and every reconnect it causes follows an answer, so this is no tight loop. Waiting the first
        // back-off step (0.125 to 0.25 s) cost a slot that long on top of the handshake at every drop: at RTT 50 ms
        // with a drop every 2,000 requests, a fifth of the pool was reconnecting at any time. Connections that
        // ended without an answer back off, growing with each one in a row.
        let delay = attempts == 0 ? 0 : reconnect.delay(afterAttempt: attempts, using: &random)
        return actions + [.schedule(.open(slot: slot), after: delay), .reportFreeStreams]
    }

    /// The end of `failureWindow` while connections keep failing and none answers: every slot waiting out its
    /// back-off opens its connection now, so the verdict comes one connection attempt after the window, not after
    /// a back-off of up to `reconnect.cap` (with one slot, twelve failures took two minutes).
    private mutating func lastTries() -> Actions {
        guard case .running = lifecycle, !anyConnectionAnswering else { return .none }
        var actions = Actions.none
        for slot in 0..<usedSlots {
            guard case .backingOff(let attempts) = slots[slot] else { continue }
            actions.append(.cancel(.open(slot: slot)))
            actions += open(slot, attempts: attempts)
        }
        return actions
    }

    /// The failure to give up with when connection `id` failed without an answer, if the pool should: the row of
    /// failures has lasted `failureWindow` seconds, `id` was opened after that, and no open connection answers,
    /// whatever the pool's size. The failure names what the last one met and how many failed in a row.
    private func givingUp(after id: ConnectionID) -> TransportError? {
        guard failureWindowOver, let first = firstConnectionAfterWindow, id.value >= first, !anyConnectionAnswering,
            let last = lastFailure
        else { return nil }
        return TransportError(last.kind, "\(last.detail), \(CountedNoun.text(failuresInARow, "connection")) in a row")
    }

    /// Whether an open connection has answered: the pool works, whatever the other slots meet.
    private var anyConnectionAnswering: Bool {
        slots.indices.contains { slot in
            if case .active = slots[slot] { return answeredSlots[slot] }
            return false
        }
    }

    private mutating func reportClosedIfDone() -> Actions {
        guard case .closing(let deadlineScheduled) = lifecycle, retired.isEmpty, slots.allSatisfy({ $0 == .closed })
        else { return .none }
        lifecycle = .closed
        return deadlineScheduled ? [.cancel(.closeDeadline), .reportClosed] : [.reportClosed]
    }

    /// Errors a reconnect cannot cure, when they end a connection before the server's HTTP/2 preface: the
    /// transport's one list of them (`TransportError.isRetryable`, `TransportError.Kind.permanent`).
    static func isPermanent(_ error: TransportError) -> Bool {
        !error.isRetryable
    }
}
