import APNSCore
import APNSCrypto
import APNSHTTP2

/// The connections to APNs for one team and one environment: runs what its `ConnectionPoolStateMachine` decides
/// (opening connections a moment apart, replacing the ones that die or retire, giving up, draining on close)
/// against real connections and timers, spreads requests over the ones with free stream slots, keeps the provider
/// token fresh, and answers every submitted request exactly once through its delegate. Runs on one event loop;
/// not thread-safe.
public final class APNSClientPool: PushTransport, APNSClientConnectionOwner {
    public weak var delegate: (any PushTransportDelegate)?
    public let configuration: APNSClientConfiguration

    let loop: EventLoop
    let context: TLSClientContext
    let tokenCache: ProviderTokenCache?
    var machine: ConnectionPoolStateMachine
    var connections = PoolConnectionTable()
    var timers: [ConnectionPoolStateMachine.Timer: EventLoopTimer] = [:]
    /// Connections with submits not yet flushed (a few at most: searched, not hashed).
    var dirty: [APNSClientConnection] = []
    var reportedFailure = false

    // Header state, rebuilt only when the provider token changes or a new campaign topic appears.
    var token: ProviderToken?
    var baseBlock: HTTP2HeaderBlock?
    var campaignBlock: HTTP2HeaderBlock?
    var campaignTopic: Topic?
    var campaignPushType: PushType?
    var fields = HTTP2HeaderFieldList(reservingFields: 8, bytes: 512)
    /// The loop turn whose first submit checked the provider token's age (`refreshHeaders`): the rest of that turn's
    /// submits skip the check. A turn lasts milliseconds and a token tens of minutes, and an `ExpiredProviderToken`
    /// answer re-signs at once whatever the turn.
    var headersCheckedInTurn: UInt64?

    /// Builds the pool; connections open when `start()` is called.
    public init(configuration: APNSClientConfiguration, loop: EventLoop, clock: @escaping ProviderTokenCache.Clock = ProviderTokenCache.systemTime) throws {
        self.configuration = configuration
        self.loop = loop
        self.context = try TLSClientContext(configuration.tls)
        switch configuration.authentication {
        case .providerToken(let signer, let refresh):
            tokenCache = try ProviderTokenCache(signer: signer, refreshIntervalSeconds: refresh, clock: clock)
        case .certificate:
            tokenCache = nil
        }
        machine = ConnectionPoolStateMachine(
            connectionCount: configuration.connectionCount, stagger: configuration.connectionStagger,
            reconnect: configuration.reconnect, failureWindow: configuration.failureWindow)
        try refreshHeaders()
    }

    /// Opens the connections, `connectionStagger` seconds apart.
    public func start() {
        run(machine.start())
    }

    /// Connections whose handshake is done and that take new streams.
    public var readyConnectionCount: Int { machine.activeConnectionCount }

    // MARK: - PushTransport

    public var freeSlots: Int { machine.freeStreams }

    public func submit(_ notification: PushNotification, tag: UInt64) {
        // Once the pool has reported that it cannot go on (the delegate hears it on the next turn), nothing more
        // goes out: a request submitted in between, such as the retry of the answer that made it give up, would
        // otherwise carry a token re-signed for nothing, or be sent after the decision to stop.
        guard !reportedFailure else {
            fail(tag, .notSent("the client stopped after a fatal error"))
            return
        }
        guard let id = machine.pickConnection(), let connection = connections[id] else {
            fail(tag, .notSent("no connection has a free stream"))
            return
        }
        let turn = loop.currentTurn
        if turn == nil || turn != headersCheckedInTurn {
            do {
                try refreshHeaders()
            } catch {
                reportFailure(error)
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

    public func flush() {
        for connection in dirty { connection.flush() }
        dirty.removeAll(keepingCapacity: true)
    }

    public func close(gracePeriod: Double) {
        run(machine.closeRequested(gracePeriod: gracePeriod))
    }
}
