import APNSCore
import APNSCrypto
import APNSHTTP2

/// The connections to APNs for one team and one environment: opens them a moment apart, spreads requests over
/// the ones with free stream slots, keeps the provider token fresh, replaces connections that die, and answers
/// every submitted request exactly once through its delegate. Runs on one event loop; not thread-safe.
public final class APNSClientPool: PushTransport, APNSClientConnectionOwner {
    public weak var delegate: (any PushTransportDelegate)?
    public let configuration: APNSClientConfiguration

    let loop: EventLoop
    let context: TLSClientContext
    let tokenCache: ProviderTokenCache?
    var connections: [APNSClientConnection?]
    /// Connections that got a GOAWAY: they take no new streams and are kept until their open streams end.
    var retiring: [APNSClientConnection] = []
    var failedConnects: [Int]
    var reconnectTimers: [EventLoopTimer?]
    var dirty = Set<Int>()
    var nextPick = 0
    var generator = SystemRandomNumberGenerator()
    var closing = false
    var closeTimer: EventLoopTimer?
    var reportedClosed = false
    var reportedFailure = false

    // Header state, rebuilt only when the provider token changes or a new campaign topic appears.
    var token: ProviderToken?
    var baseBlock: HTTP2HeaderBlock?
    var campaignBlock: HTTP2HeaderBlock?
    var campaignTopic: Topic?
    var campaignPushType: PushType?
    var fields = HTTP2HeaderFieldList(reservingFields: 8, bytes: 512)

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
        let count = max(1, configuration.connectionCount)
        connections = Array(repeating: nil, count: count)
        failedConnects = Array(repeating: 0, count: count)
        reconnectTimers = Array(repeating: nil, count: count)
        try refreshHeaders()
    }

    /// Opens the connections, `connectionStagger` seconds apart.
    public func start() {
        for index in connections.indices {
            let delay = Double(index) * configuration.connectionStagger
            if delay == 0 {
                open(index)
            } else {
                reconnectTimers[index] = loop.schedule(after: delay) { [weak self] in self?.open(index) }
            }
        }
    }

    /// Connections whose handshake is done and that take new streams.
    public var readyConnectionCount: Int { connections.reduce(0) { $0 + (($1?.state == .ready) ? 1 : 0) } }

    // MARK: - PushTransport

    public var freeSlots: Int {
        guard !closing else { return 0 }
        var total = 0
        for case let connection? in connections { total += connection.availableSlots }
        return total
    }

    public func submit(_ notification: PushNotification, tag: UInt64) {
        guard let index = pickConnection(), let connection = connections[index] else {
            fail(tag, .notSent("no connection has a free stream"))
            return
        }
        do {
            try refreshHeaders()
        } catch {
            reportFailure(error)
            fail(tag, .notSent("provider token: \(error)"))
            return
        }
        if campaignTopic == nil { adoptCampaign(notification) }
        let useCampaign = notification.topic == campaignTopic && notification.pushType == campaignPushType
        fields.setAPNSRequestFields(for: notification, topicAndPushTypeInBlock: useCampaign)
        do {
            try connection.submit(
                block: useCampaign ? campaignBlock : baseBlock, fields: fields, body: notification.payload, tag: tag,
                tokenSerial: token?.serial ?? 0)
            dirty.insert(index)
        } catch {
            fail(tag, .notSent("\(error)"))
        }
    }

    public func flush() {
        for index in dirty { connections[index]?.flush() }
        dirty.removeAll(keepingCapacity: true)
    }

    public func close(gracePeriod: Double) {
        if !closing {
            closing = true
            for index in reconnectTimers.indices {
                reconnectTimers[index]?.cancel()
                reconnectTimers[index] = nil
            }
        }
        closeTimer?.cancel()
        closeTimer = nil
        if gracePeriod > 0 {
            closeTimer = loop.schedule(after: gracePeriod) { [weak self] in self?.close(gracePeriod: 0) }
            closeIdleConnections()
        } else {
            for connection in connections.compactMap({ $0 }) + retiring {
                connection.close(abort: connection.inFlightCount > 0, reason: "closing")
            }
        }
        reportClosedIfDone()
    }
}
