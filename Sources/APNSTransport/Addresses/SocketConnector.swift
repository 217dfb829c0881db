/// Drives one non-blocking TCP connect over a host's addresses, racing them as its `HappyEyeballsSchedule` decides
/// (RFC 8305: the next address after a 250 ms head start or a failure, each within its own connect timeout, the
/// first to connect wins). Owns the sockets being connected (and their loop registrations) until it hands the
/// winner to `completion`, connected, with `TCP_NODELAY` set, and no longer registered; closes the others.
/// Reports each attempt's end to `report` (the pool's `AddressHealth`).
public final class SocketConnector {
    private let loop: EventLoop
    private let addresses: [SocketAddress]
    private var schedule: HappyEyeballsSchedule
    private var completion: ((Result<Socket, TransportError>) -> Void)?
    private let report: ((SocketAddress, ConnectAttemptOutcome) -> Void)?
    /// The sockets of the pending attempts, by address index.
    private var sockets: [Int: Socket] = [:]
    private var timer: EventLoopTimer?
    /// What each failed address met, in the order they failed, for the message when all fail.
    private var failures: [TransportError] = []
    /// The schedule's actions not run yet (an action can lead to more at once: a dial that fails).
    private var queued: [HappyEyeballsSchedule.Action] = []

    /// Prepares to connect to `addresses` in this order: each gets `timeout` seconds, the next starts after
    /// `attemptDelay` seconds without a connection (or at once after a failure). `completion` runs once, on the
    /// loop, never from inside `start()`. Once started, the connector keeps itself alive until it completes or is
    /// cancelled.
    public init(
        loop: EventLoop, addresses: [SocketAddress], timeout: Double, attemptDelay: Double = 0.25,
        report: ((SocketAddress, ConnectAttemptOutcome) -> Void)? = nil,
        completion: @escaping (Result<Socket, TransportError>) -> Void
    ) {
        self.loop = loop
        self.addresses = addresses
        self.schedule = HappyEyeballsSchedule(
            addressCount: addresses.count, attemptDelay: attemptDelay, attemptTimeout: timeout)
        self.report = report
        self.completion = completion
    }

    /// Starts connecting (on the next loop turn).
    public func start() {
        loop.executeNextTurn { self.run(self.schedule.start(now: self.loop.now())) }
    }

    /// Gives up: closes every socket; `completion` is not called, nor `report`.
    public func cancel() {
        completion = nil
        finish(.failure(TransportError(.timeout, "cancelled")))
    }

    /// The pending attempt at `index` became writable (or hung up): it connected or failed.
    fileprivate func attemptReady(_ index: Int) {
        guard let socket = sockets[index] else { return }
        let code = socket.takePendingError()
        if code == 0 {
            run(schedule.attemptConnected(index))
        } else {
            close(index)
            failures.append(TransportError.socket("connect to \(addresses[index])", code))
            report?(addresses[index], .failed)
            run(schedule.attemptFailed(index, now: loop.now()))
        }
    }

    /// Runs the schedule's actions in order, then waits for its next deadline.
    private func run(_ actions: [HappyEyeballsSchedule.Action]) {
        let idle = queued.isEmpty
        queued += actions
        guard idle else { return }
        var next = 0
        while next < queued.count, completion != nil {
            perform(queued[next])
            next += 1
        }
        queued.removeAll()
        guard completion != nil else { return }
        timer?.cancel()
        timer = nil
        if let deadline = schedule.nextDeadline {
            // The timer's closure keeps the connector alive while it works; finishing cancels it.
            timer = loop.schedule(at: deadline) {
                self.timer = nil
                self.run(self.schedule.tick(now: self.loop.now()))
            }
        }
    }

    private func perform(_ action: HappyEyeballsSchedule.Action) {
        switch action {
        case .dial(let index):
            dial(index)
        case .drop(let index, let outcome):
            close(index)
            if outcome == .timedOut {
                failures.append(
                    TransportError(
                        .timeout, "connect to \(addresses[index]): no answer after \(schedule.attemptTimeout)s"))
            }
            report?(addresses[index], outcome)
        case .succeed(let index):
            guard let socket = sockets.removeValue(forKey: index) else { return }
            loop.deregister(socket.fd)
            report?(addresses[index], .connected)
            finish(.success(socket))
        case .fail:
            finish(.failure(combinedFailure))
        }
    }

    private func dial(_ index: Int) {
        let address = addresses[index]
        do throws(TransportError) {
            let socket = try Socket.tcp(family: address.family)
            sockets[index] = socket
            if try socket.startConnect(to: address) {
                run(schedule.attemptConnected(index))
                return
            }
            try loop.register(
                socket.fd, interest: .write, handler: ConnectAttemptHandler(connector: self, index: index))
        } catch {
            close(index)
            failures.append(error)
            report?(address, .failed)
            run(schedule.attemptFailed(index, now: loop.now()))
        }
    }

    /// Closes the attempt's socket, if it has one.
    private func close(_ index: Int) {
        guard let socket = sockets.removeValue(forKey: index) else { return }
        loop.deregister(socket.fd)
        socket.close()
    }

    /// Every address failed: what each met (the kind of the last), or the one error alone.
    private var combinedFailure: TransportError {
        guard let last = failures.last else { return TransportError(.connectFailed, "no addresses to connect to") }
        guard failures.count > 1 else { return last }
        return TransportError(last.kind, failures.map(\.detail).joined(separator: "; "))
    }

    private func finish(_ result: Result<Socket, TransportError>) {
        timer?.cancel()
        timer = nil
        for index in Array(sockets.keys) { close(index) }
        queued.removeAll()
        guard let completion else { return }
        self.completion = nil
        if case .success(let connected) = result {
            do throws(TransportError) {
                try connected.setNoDelay()
            } catch {
                connected.close()
                completion(.failure(error))
                return
            }
        }
        completion(result)
    }
}

/// The loop's handler for one attempt's socket: tells its connector which attempt became ready.
private final class ConnectAttemptHandler: EventLoopHandler {
    let connector: SocketConnector
    let index: Int

    init(connector: SocketConnector, index: Int) {
        self.connector = connector
        self.index = index
    }

    func readable() {}
    func writable() { connector.attemptReady(index) }
    func hangup() { connector.attemptReady(index) }
}
