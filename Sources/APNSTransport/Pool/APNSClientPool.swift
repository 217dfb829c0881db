import APNSCore
import APNSCrypto
import APNSHTTP2

/// The connections to APNs for one team and one environment: runs what its `ConnectionPoolStateMachine` decides
/// (opening connections a moment apart, replacing the ones that die or retire, giving up, draining on close)
/// against real connections and timers, spreads requests over the ones with free stream slots, keeps the provider
/// token fresh, and answers every submitted request exactly once through its delegate. Runs on one event loop;
/// not thread-safe.
public final class APNSClientPool: PushTransport, APNSClientConnectionOwner {
    /// Receives the outcomes and events of the pool.
    public weak var delegate: (any PushTransportDelegate)?
    /// The settings the pool runs with.
    public let configuration: APNSClientConfiguration

    let loop: EventLoop
    let context: TLSClientContext
    let tokenCache: ProviderTokenCache?
    @exclusivity(unchecked)
    var machine: ConnectionPoolStateMachine
    @exclusivity(unchecked)
    var connections = PoolConnectionTable()
    @exclusivity(unchecked)
    var timers: [ConnectionPoolStateMachine.Timer: EventLoopTimer] = [:]
    /// Connections with submits not yet flushed (a few at most: searched, not hashed).
    @exclusivity(unchecked)
    var dirty: [APNSClientConnection] = []
    /// How connects to each address ended: the order new connections dial the addresses in.
    @exclusivity(unchecked)
    var addressHealth = AddressHealth()
    /// The machine's actions not run yet, in order (see `run`).
    @exclusivity(unchecked)
    private var queuedActions: [ConnectionPoolStateMachine.Action] = []
    /// Whether `run` is running actions (the events they raise queue theirs behind).
    @exclusivity(unchecked)
    private var runningActions = false

    // Header state, rebuilt only when the provider token changes or a new campaign topic appears.
    @exclusivity(unchecked)
    var token: ProviderToken?
    @exclusivity(unchecked)
    var baseBlock: HTTP2HeaderBlock?
    @exclusivity(unchecked)
    var campaignBlock: HTTP2HeaderBlock?
    @exclusivity(unchecked)
    var campaignTopic: Topic?
    @exclusivity(unchecked)
    var campaignPushType: PushType?
    @exclusivity(unchecked)
    var fields = HTTP2HeaderFieldList(reservingFields: 8, bytes: 512)
    /// The loop turn whose first submit checked the provider token's age (`refreshHeaders`): the rest of that turn's
    /// submits skip the check. A turn lasts milliseconds and a token tens of minutes, and an `ExpiredProviderToken`
    /// answer re-signs at once whatever the turn.
    @exclusivity(unchecked)
    var headersCheckedInTurn: UInt64?

    /// Builds the pool; connections open when `start()` is called.
    /// `clock` is the wall clock the provider token's `iat` comes from, `uptime` the clock its age is counted on.
    public init(
        configuration: APNSClientConfiguration, loop: EventLoop,
        clock: @escaping ProviderTokenCache.Clock = ProviderTokenCache.systemTime,
        uptime: @escaping ProviderTokenCache.Uptime = ProviderTokenCache.systemUptime
    ) throws {
        self.configuration = configuration
        self.loop = loop
        self.context = try TLSClientContext(configuration.tls)
        switch configuration.authentication {
        case .providerToken(let signer, let refresh):
            tokenCache = try ProviderTokenCache(
                signer: signer, refreshIntervalSeconds: refresh, clock: clock, uptime: uptime)
        case .certificate:
            tokenCache = nil
        }
        machine = ConnectionPoolStateMachine(
            maximumConnections: configuration.maximumConnections, initialConnections: configuration.initialConnections,
            streamsPerConnection: configuration.streamsPerConnection,
            closeIdleAfter: configuration.closeIdleConnectionsAfter, stagger: configuration.connectionStagger,
            reconnect: configuration.reconnect, failureWindow: configuration.failureWindow,
            stopAfterTokensExpiredOnFirstUse: configuration.stopAfterTokensExpiredOnFirstUse)
        do {
            try refreshHeaders()
        } catch {
            throw error.error
        }
    }

    /// Opens the initial connections, `connectionStagger` seconds apart.
    public func start() {
        run(machine.start())
    }

    /// Connections whose handshake is done and that take new streams.
    public var readyConnectionCount: Int { machine.activeConnectionCount }

    // MARK: - PushTransport

    /// Requests that can be submitted now, over all connections.
    public var freeSlots: Int { machine.freeStreams }

    /// Sends the notification on a connection with a free stream; the outcome arrives with `tag`.
    public func submit(_ notification: PushNotification, tag: UInt64) {
        // The machine's answer is this call's: run here, never queued behind an action that may have called us.
        machine.requestSubmitted().consumeEach { action in
            switch action {
            case .startRequest(let id):
                start(notification, tag: tag, on: id)
            case .refuseRequest(let why):
                fail(tag, .notSent(why))
            default:
                run(ConnectionPoolStateMachine.Actions(action))
            }
        }
    }

    /// Starts the request on connection `id`, with the provider token checked once a loop turn, and tells the
    /// machine the connection's new load.
    private func start(_ notification: PushNotification, tag: UInt64, on id: ConnectionPoolStateMachine.ConnectionID) {
        guard let connection = connections[id] else {  // the machine names only connections the pool holds
            fail(tag, .notSent("no connection has a free stream"))
            return
        }
        let turn = loop.currentTurn
        if turn == nil || turn != headersCheckedInTurn {
            do {
                try refreshHeaders()
            } catch {
                run(machine.failed(error))
                fail(tag, .notSent("provider token: \(error)"))
                return
            }
            headersCheckedInTurn = turn
        }
        if campaignTopic == nil { adoptCampaign(notification) }
        let useCampaign = notification.topic == campaignTopic && notification.pushType == campaignPushType
        fields.setAPNSRequestFields(for: notification, topicAndPushTypeInBlock: useCampaign)
        do {
            try connection.submit(
                block: useCampaign ? campaignBlock : baseBlock, fields: fields, body: notification.payload, tag: tag,
                tokenSerial: token?.serial ?? 0)
            if !dirty.contains(where: { $0 === connection }) { dirty.append(connection) }
        } catch {
            fail(tag, .notSent("\(error)"))
        }
        run(machine.requestStartedOrEnded(id, load: connection.load))
    }

    /// Sends what the submits of this turn queued, and opens one more connection if the pool is short of room.
    public func flush() {
        for connection in dirty { connection.flush() }
        dirty.removeAll(keepingCapacity: true)
        run(machine.widenIfNeeded())
    }

    /// Keeps room for `reach` requests in flight and one connection's share more, not beyond (see
    /// `ConnectionPoolStateMachine.widenIfNeeded`).
    public func expectInFlight(atMost reach: Int) {
        run(machine.expectInFlight(atMost: reach))
    }

    /// Closes every connection, allowing `gracePeriod` seconds for answers in flight.
    public func close(gracePeriod: Double) {
        run(machine.closeRequested(gracePeriod: gracePeriod))
    }
}

// MARK: - Connections

extension APNSClientPool {
    /// Runs the machine's actions in order, after it has returned. An action can make a connection report back at
    /// once (a close reports the connection closed); the actions of that event join the queue and run after the
    /// ones before them, by the call already running the queue: the pool never acts inside another action.
    func run(_ actions: consuming ConnectionPoolStateMachine.Actions) {
        guard !runningActions else {  // the call running actions runs these after its own
            (consume actions).consumeEach { queuedActions.append($0) }
            return
        }
        runningActions = true
        (consume actions).consumeEach { perform($0) }
        var next = 0
        while next < queuedActions.count {
            perform(queuedActions[next])
            next += 1
        }
        if next > 0 { queuedActions.removeAll(keepingCapacity: true) }
        runningActions = false
    }

    private func perform(_ action: ConnectionPoolStateMachine.Action) {
        switch action {
        case .startRequest, .refuseRequest:
            break  // answers to `submit`, run there
        case .open(let id):
            open(id)
        case .schedule(let timer, let delay):
            timers[timer]?.cancel()
            timers[timer] = loop.schedule(after: delay) { [weak self] in self?.timerFired(timer) }
        case .cancel(let timer):
            timers.removeValue(forKey: timer)?.cancel()
        case .drain(let id):
            connections[id]?.drain()
        case .close(let id):
            connections[id]?.close()
        case .abort(let id):
            connections[id]?.abort(TransportError(.shutdown, "the pool closed before its answer"))
        case .reportFreeStreams:
            delegate?.transportHasFreeSlots()
        case .reportFailure(let failure):
            loop.executeNextTurn { [weak self] in self?.delegate?.transportFailed(failure.error) }
        case .reportClosed:
            loop.executeNextTurn { [weak self] in self?.delegate?.transportDidClose() }
        }
    }

    private func timerFired(_ timer: ConnectionPoolStateMachine.Timer) {
        timers[timer] = nil
        run(machine.timerFired(timer))
    }

    private func open(_ id: ConnectionPoolStateMachine.ConnectionID) {
        let timing = ClientConnectionStateMachine.Timing(
            requestTimeout: configuration.requestTimeout, pingInterval: configuration.pingInterval,
            pingTimeout: configuration.pingTimeout, settingsTimeout: configuration.settingsTimeout,
            stallTimeout: configuration.stallTimeout)
        let http2 = HTTP2ClientConfiguration(
            maximumConcurrentStreams: configuration.maximumStreamsPerConnection,
            lastStreamID: configuration.lastStreamID)
        do {
            connections[id] = try APNSClientConnection(
                id: id, endpoint: configuration.endpoint, proxy: configuration.proxy, dialing: dialPlan(for: id),
                context: context, http2: http2, timing: timing, loop: loop, owner: self)
        } catch {
            run(machine.failed(.http2(error)))
            run(machine.openFailed(id))
        }
    }

    /// How connection `id` dials: the pinned addresses or the resolver's, spread by the connection's number and
    /// ordered by their health; each attempt's end is remembered.
    private func dialPlan(for id: ConnectionPoolStateMachine.ConnectionID) -> DialPlan {
        DialPlan(
            overrides: configuration.resolve, attemptDelay: configuration.connectAttemptDelay,
            order: { [weak self] addresses in
                guard let self else { return addresses }
                return addressHealth.order(addresses, connection: id.value, now: loop.now())
            },
            report: { [weak self] address, outcome in
                guard let self else { return }
                addressHealth.record(outcome, for: address, now: loop.now())
            })
    }

    /// Reports a request that never reached a connection, on the next loop turn (never from inside `submit`).
    func fail(_ tag: UInt64, _ failure: TransportFailure) {
        loop.executeNextTurn { [weak self] in
            self?.delegate?.transport(completed: tag, outcome: .failed(failure))
        }
    }

    // MARK: - APNSClientConnectionOwner

    func connection(
        _ connection: APNSClientConnection, completed tag: UInt64, outcome: consuming PushOutcome,
        tokenSerial: Int
    ) {
        if case .answered(let answer) = outcome { noteTokenAnswer(answer.reason, tokenSerial: tokenSerial) }
        run(machine.requestStartedOrEnded(connection.id, load: connection.load))
        delegate?.transport(completed: tag, outcome: consume outcome)
    }

    func connectionAnswered(_ connection: APNSClientConnection) {
        run(machine.connectionAnswered(connection.id))
    }

    func connectionBecameReady(_ connection: APNSClientConnection) {
        run(machine.connectionReady(connection.id, load: connection.load))
    }

    func connectionLoadChanged(_ connection: APNSClientConnection) {
        run(machine.loadChanged(connection.id, load: connection.load))
    }

    func connectionStoppedTakingStreams(_ connection: APNSClientConnection, hadAnswer: Bool, inFlight: Int) {
        run(machine.connectionStoppedTakingStreams(connection.id, hadAnswer: hadAnswer, inFlight: inFlight))
    }

    func connection(
        _ connection: APNSClientConnection, closedWith error: TransportError?,
        server: ClientConnectionStateMachine.ServerSigns
    ) {
        connections[connection.id] = nil
        dirty.removeAll { $0 === connection }
        run(
            machine.connectionClosed(
                connection.id, error: error, hadAnswer: server.answered, serverSpoke: server.spoke))
    }
}

// MARK: - Headers

extension APNSClientPool {
    /// Re-signs the provider token when the cache says it is time, and rebuilds the shared header blocks then.
    func refreshHeaders() throws(ConnectionPoolStateMachine.Failure) {
        var jwt: String?
        if let tokenCache {
            do {
                // The serial names a signing: comparing it, not the whole token, keeps this per-request check cheap.
                if try tokenCache.currentSerial() == token?.serial, baseBlock != nil { return }
                let current = try tokenCache.currentToken()
                token = current
                jwt = current.jwt
            } catch {
                throw .providerToken(error)
            }
        } else if baseBlock != nil {
            return
        }
        do {
            baseBlock = try HTTP2HeaderBlock.apnsRequests(endpoint: configuration.endpoint, providerToken: jwt)
            if let campaignTopic, let campaignPushType {
                campaignBlock = try HTTP2HeaderBlock.apnsRequests(
                    endpoint: configuration.endpoint, providerToken: jwt, topic: campaignTopic,
                    pushType: campaignPushType)
            }
        } catch {
            throw .http2(error)
        }
    }

    /// Takes the first notification's topic and push type as the campaign's, so their header fields are laid out
    /// once and shared by every request that matches.
    func adoptCampaign(_ notification: PushNotification) {
        guard
            let block = try? HTTP2HeaderBlock.apnsRequests(
                endpoint: configuration.endpoint, providerToken: token?.jwt, topic: notification.topic,
                pushType: notification.pushType)
        else { return }
        campaignTopic = notification.topic
        campaignPushType = notification.pushType
        campaignBlock = block
    }

    /// Acts on what an answer says about the provider token the request carried: an `ExpiredProviderToken` for
    /// the token in use re-signs it at once (once per token); any other answer shows the token was accepted. Gives
    /// the machine how many fresh tokens in a row were declared expired on first use (it gives up on the clock).
    func noteTokenAnswer(_ reason: APNSReason?, tokenSerial: Int) {
        guard let tokenCache, tokenSerial > 0 else { return }
        guard reason == .expiredProviderToken else {
            tokenCache.accepted(serial: tokenSerial)
            return
        }
        do throws(ConnectionPoolStateMachine.Failure) {
            let invalidation: ProviderTokenInvalidation
            do {
                invalidation = try tokenCache.invalidate(serial: tokenSerial)
            } catch {
                throw .providerToken(error)
            }
            if case .refreshed = invalidation { try refreshHeaders() }
        } catch {
            run(machine.failed(error))
        }
        run(
            machine.providerTokenExpired(
                onFirstUseInARow: tokenCache.tokensExpiredOnFirstUse, clockProblem: tokenCache.clockProblem(limit: 1)))
    }
}

// MARK: - PoolConnectionTable

/// The pool's open connections by id, in a small array searched in order: a pool holds a handful of connections,
/// and comparing a few ids costs less than hashing one, which every submitted request would pay.
struct PoolConnectionTable {
    private var connections: [APNSClientConnection] = []

    subscript(id: ConnectionPoolStateMachine.ConnectionID) -> APNSClientConnection? {
        get {
            for connection in connections where connection.id == id { return connection }
            return nil
        }
        set {
            connections.removeAll { $0.id == id }
            if let newValue { connections.append(newValue) }
        }
    }
}

// MARK: - HTTP2HeaderFieldList+APNS

/// APNs request headers in the two halves the client session takes: the shared block built once per campaign and
/// credential, and the per-request fields refilled for every notification.
extension HTTP2HeaderBlock {
    /// The fields every push to `endpoint` shares: `:method POST`, `:scheme https`, `:authority`, then
    /// `authorization: bearer <jwt>` (token-based trust; nil with a client certificate), and `apns-topic` /
    /// `apns-push-type` when the whole campaign uses one topic and push type (then leave them out of the
    /// per-request fields). Build a new block when the provider token is re-signed.
    public static func apnsRequests(
        endpoint: APNSEndpoint, providerToken: String?, topic: Topic? = nil, pushType: PushType? = nil
    ) throws(HTTP2Error) -> HTTP2HeaderBlock {
        var fields: [(name: String, value: String)] = []
        if let providerToken { fields.append(("authorization", "bearer " + providerToken)) }
        if let topic { fields.append(("apns-topic", topic.value)) }
        if let pushType { fields.append(("apns-push-type", pushType.rawValue)) }
        return try HTTP2HeaderBlock(authority: endpoint.authority, fields: fields)
    }
}

extension HTTP2HeaderFieldList {
    /// The `:path` before the device token.
    static var devicePathPrefix: StaticString { "/3/device/" }

    /// Replaces the list with one notification's per-request fields: `:path /3/device/<token>`, then `apns-id`,
    /// `apns-expiration`, `apns-priority` and `apns-collapse-id` when set, and `apns-topic` / `apns-push-type`
    /// unless the shared block carries them. Allocates nothing once the list has grown.
    public mutating func setAPNSRequestFields(for notification: PushNotification, topicAndPushTypeInBlock: Bool) {
        // The commonest request has nothing but its `:path`, like the one before: overwrite the token in place
        // when it is as long as the last one (a list of one field here is always that `:path`).
        let pathOnly =
            topicAndPushTypeInBlock && notification.apnsID == nil && notification.expiration == nil
            && notification.priority == nil && notification.collapseID == nil
        if pathOnly, count == 1, nameCount(at: 0) == 5,
            replaceValueTail(ofField: 0, from: Self.devicePathPrefix.utf8CodeUnitCount, with: notification.token.hex)
        {
            return
        }
        removeAll()
        append(name: ":path", prefix: Self.devicePathPrefix, value: notification.token.hex)
        if !topicAndPushTypeInBlock {
            append(name: "apns-topic", value: notification.topic.value, indexable: true)
            append(name: "apns-push-type", value: notification.pushType.rawValue, indexable: true)
        }
        if let apnsID = notification.apnsID { append(name: "apns-id", value: apnsID.bytes) }
        // A relative expiration is resolved by the dispatcher before the notification gets here.
        if let epoch = notification.expiration?.epochSeconds { append(name: "apns-expiration", decimal: epoch) }
        if let priority = notification.priority {
            append(name: "apns-priority", decimal: Int64(priority.rawValue), indexable: true)
        }
        if let collapseID = notification.collapseID { append(name: "apns-collapse-id", value: collapseID.value) }
    }
}
