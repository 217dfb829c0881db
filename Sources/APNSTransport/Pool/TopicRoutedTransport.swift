import APNSCore

/// A run's transport over several provider keys (docs/CONNECTING.md, "Several provider keys"): one transport per
/// key (an `APNSClientPool`, with its own provider-token cache and its own connections, so no connection ever
/// carries two keys' tokens), and each request handed to the one its topic's key routes to (`TopicKeyRoutes`).
/// A run with one key uses its pool directly, without this.
///
/// The dispatcher sees one transport: `freeSlots` adds up each key's free slots less the requests waiting for it,
/// so a key without room never holds up the others. A request for a key whose pool has no free slot right now
/// waits here, in order, and goes to that pool as soon as it has room (the dispatcher's in-flight window bounds
/// how many wait). A waiting request is released to go
/// out only by `flush()`, which the dispatcher calls once the request's journal line is written, so none leaves
/// unjournaled. Runs on one event loop; not thread-safe.
public final class TopicRoutedTransport: PushTransport {
    /// Receives the outcomes and events of every routed transport.
    public weak var delegate: (any PushTransportDelegate)?
    /// One per key, in the key numbers of `routes`.
    public let lanes: [Lane]
    private let routes: TopicKeyRoutes
    /// Runs work on the next loop turn (`EventLoop.executeNextTurn`), never inside a lane's call.
    private let nextTurn: (@escaping () -> Void) -> Void
    /// The last topic routed and its lane: most requests repeat the one before.
    private var lastTopic: Topic?
    private var lastLane = 0
    private var waitingCount = 0
    private var drainScheduled = false
    private var closing = false
    private var lanesOpen: Int

    /// - Parameters:
    ///   - transports: one per key, numbered as `routes` numbers the keys.
    ///   - labels: what names each key in messages ("key ABC1234567"); the key's number when missing.
    ///   - nextTurn: schedules work for the next loop turn.
    public init(
        transports: [any PushTransport], labels: [String] = [], routes: TopicKeyRoutes,
        nextTurn: @escaping (@escaping () -> Void) -> Void
    ) {
        self.routes = routes
        self.nextTurn = nextTurn
        lanes = transports.enumerated().map { index, transport in
            Lane(
                key: index, label: labels.indices.contains(index) ? labels[index] : "key \(index)", transport: transport
            )
        }
        lanesOpen = lanes.count
        for lane in lanes {
            lane.owner = self
            lane.transport.delegate = lane
        }
    }

    /// Requests waiting for room on their key's connections.
    public var waitingRequests: Int { waitingCount }

    // MARK: - PushTransport

    /// Requests that can be submitted now, over all routes.
    public var freeSlots: Int {
        var free = 0
        for lane in lanes { free += max(0, lane.transport.freeSlots - (lane.waiting.count - lane.head)) }
        return free
    }

    /// Sends the notification on the transport its topic routes to; the outcome arrives with `tag`.
    public func submit(_ notification: PushNotification, tag: UInt64) {
        guard let lane = lane(for: notification.topic), !closing else {
            let why = closing ? "the run was closing" : "no provider key covers topic \(notification.topic.value)"
            nextTurn { [weak self] in self?.delegate?.transport(completed: tag, outcome: .failed(.notSent(why))) }
            return
        }
        if lane.waiting.isEmpty, lane.transport.freeSlots > 0 {
            lane.transport.submit(notification, tag: tag)
        } else {
            lane.waiting.append((notification, tag))
            waitingCount += 1
        }
    }

    /// Flushes every routed transport's pending writes.
    public func flush() {
        for lane in lanes {
            lane.released = lane.waiting.count
            drain(lane)
            lane.transport.flush()
        }
    }

    /// Tells every routed transport: any one topic may carry all of the campaign's requests.
    public func expectInFlight(atMost reach: Int) {
        for lane in lanes { lane.transport.expectInFlight(atMost: reach) }
    }

    /// Closes every routed transport, allowing `gracePeriod` seconds for answers in flight.
    public func close(gracePeriod: Double) {
        guard !closing else { return }
        closing = true
        for lane in lanes where !lane.waiting.isEmpty {
            let waiting = lane.waiting[lane.head...]
            lane.waiting.removeAll()
            lane.head = 0
            lane.released = 0
            waitingCount -= waiting.count
            let why = "closed before the connections of \(lane.label) had room"
            nextTurn { [weak self] in
                for (_, tag) in waiting { self?.delegate?.transport(completed: tag, outcome: .failed(.notSent(why))) }
            }
        }
        for lane in lanes { lane.transport.close(gracePeriod: gracePeriod) }
    }

    // MARK: - Routing

    private func lane(for topic: Topic) -> Lane? {
        if topic == lastTopic { return lanes[lastLane] }
        guard let key = routes.key(for: topic), lanes.indices.contains(key) else { return nil }
        lastTopic = topic
        lastLane = key
        return lanes[key]
    }

    /// Hands a lane's released waiting requests to its transport while it has free slots; true if any went.
    @discardableResult
    private func drain(_ lane: Lane) -> Bool {
        var moved = false
        while lane.head < lane.released, lane.transport.freeSlots > 0 {
            let (notification, tag) = lane.waiting[lane.head]
            lane.head += 1
            waitingCount -= 1
            lane.transport.submit(notification, tag: tag)
            moved = true
        }
        if lane.head == lane.waiting.count {
            lane.waiting.removeAll(keepingCapacity: true)
            lane.head = 0
            lane.released = 0
        } else if lane.head > 1024, lane.head * 2 > lane.waiting.count {
            lane.waiting.removeFirst(lane.head)
            lane.released -= lane.head
            lane.head = 0
        }
        return moved
    }

    /// After a lane freed slots: on the next turn, released requests waiting for it go out.
    fileprivate func laneMayHaveRoom(_ lane: Lane) {
        guard lane.head < lane.released, !drainScheduled else { return }
        drainScheduled = true
        nextTurn { [weak self] in
            guard let self else { return }
            drainScheduled = false
            for lane in lanes where drain(lane) { lane.transport.flush() }
        }
    }

    fileprivate func laneClosed() {
        lanesOpen -= 1
        if lanesOpen == 0 { delegate?.transportDidClose() }
    }

    /// A lane's transport failure, naming its key.
    struct LaneFailure: Error, CustomStringConvertible {
        let label: String
        let error: any Error
        var description: String { "\(label): \(error)" }
    }

    // MARK: - Lane

    /// One key's transport and the requests waiting for it; hears that transport as its delegate and passes on
    /// what the dispatcher must hear.
    public final class Lane: PushTransportDelegate {
        /// The route's key, as topics map to it.
        public let key: Int
        /// A name for the route in logs and errors.
        public let label: String
        /// The transport the route's notifications go to.
        public let transport: any PushTransport
        fileprivate weak var owner: TopicRoutedTransport?
        /// Waiting requests from `head` on; those before `released` may go out.
        fileprivate var waiting: [(PushNotification, UInt64)] = []
        fileprivate var head = 0
        fileprivate var released = 0

        init(key: Int, label: String, transport: any PushTransport) {
            self.key = key
            self.label = label
            self.transport = transport
        }

        /// Passes a routed transport's outcome on to the delegate.
        public func transport(completed tag: UInt64, outcome: consuming PushOutcome) {
            owner?.delegate?.transport(completed: tag, outcome: outcome)
            owner?.laneMayHaveRoom(self)
        }

        /// Tells the delegate that a routed transport has free slots.
        public func transportHasFreeSlots() {
            owner?.laneMayHaveRoom(self)
            owner?.delegate?.transportHasFreeSlots()
        }

        /// Passes a routed transport's failure on to the delegate.
        public func transportFailed(_ error: any Error) {
            owner?.delegate?.transportFailed(LaneFailure(label: label, error: error))
        }

        /// Tells the delegate when a routed transport has closed.
        public func transportDidClose() {
            owner?.laneClosed()
        }
    }
}
