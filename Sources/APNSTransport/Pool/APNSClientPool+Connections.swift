import APNSCore
import APNSCrypto
import APNSHTTP2

extension APNSClientPool {
    /// Runs the machine's actions in order. A connection closing during one of them reports back at once; its
    /// event's actions run before the rest of these.
    func run(_ actions: [ConnectionPoolStateMachine.Action]) {
        for action in actions {
            switch action {
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
            case .reportFailure(let error):
                reportFailure(error)
            case .reportClosed:
                loop.executeNextTurn { [weak self] in self?.delegate?.transportDidClose() }
            }
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
            maximumConcurrentStreams: configuration.maximumStreamsPerConnection, lastStreamID: configuration.lastStreamID)
        do {
            connections[id] = try APNSClientConnection(
                id: id, endpoint: configuration.endpoint, proxy: configuration.proxy, context: context,
                http2: http2, timing: timing, loop: loop, owner: self)
        } catch {
            reportFailure(error)
            run(machine.openFailed(id))
        }
    }

    /// Reports a request that never reached a connection, on the next loop turn (never from inside `submit`).
    func fail(_ tag: UInt64, _ failure: TransportFailure) {
        loop.executeNextTurn { [weak self] in
            self?.delegate?.transport(completed: tag, outcome: .failed(failure))
        }
    }

    /// Tells the delegate the transport cannot work, once, on the next loop turn.
    func reportFailure(_ error: any Error) {
        guard !reportedFailure else { return }
        reportedFailure = true
        loop.executeNextTurn { [weak self] in self?.delegate?.transportFailed(error) }
    }

    // MARK: - APNSClientConnectionOwner

    func connection(
        _ connection: APNSClientConnection, completed tag: UInt64, outcome: PushOutcome,
        tokenSerial: Int
    ) {
        if case .answered(let answer) = outcome { noteTokenAnswer(answer.reason, tokenSerial: tokenSerial) }
        run(machine.requestStartedOrEnded(connection.id, load: connection.load))
        delegate?.transport(completed: tag, outcome: outcome)
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

    func connectionStoppedTakingStreams(_ connection: APNSClientConnection) {
        run(machine.connectionStoppedTakingStreams(
            connection.id, hadAnswer: connection.machine.hadAnswer, inFlight: connection.load.inFlight))
    }

    func connection(_ connection: APNSClientConnection, closedWith error: TransportError?) {
        connections[connection.id] = nil
        dirty.removeAll { $0 === connection }
        run(machine.connectionClosed(
            connection.id, error: error, hadAnswer: connection.machine.hadAnswer,
            serverSpoke: connection.machine.serverSpoke))
    }
}
