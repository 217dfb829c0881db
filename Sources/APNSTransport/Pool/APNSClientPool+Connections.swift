import APNSCore
import APNSCrypto
import APNSHTTP2

extension APNSClientPool {
    func open(_ index: Int) {
        reconnectTimers[index] = nil
        guard !closing else { return }
        let timing = APNSClientConnection.Timing(
            requestTimeout: configuration.requestTimeout, pingInterval: configuration.pingInterval,
            pingTimeout: configuration.pingTimeout)
        let http2 = HTTP2ClientConfiguration(
            maximumConcurrentStreams: configuration.maximumStreamsPerConnection, lastStreamID: configuration.lastStreamID)
        do {
            connections[index] = try APNSClientConnection(
                id: index, endpoint: configuration.endpoint, proxy: configuration.proxy, context: context,
                http2: http2, timing: timing, loop: loop, owner: self)
        } catch {
            reportFailure(error)
        }
    }

    /// The ready connection with a free slot and the fewest requests in flight; ties go round-robin. Load spreads
    /// evenly whatever each server's stream limit (a dropped connection then takes only its share of what is in
    /// flight), and a connection still at its initial limit of one stream gets its first request at once, which
    /// lets the server raise the limit.
    func pickConnection() -> Int? {
        var best: Int?
        var bestLoad = Int.max
        let count = connections.count
        for offset in 0..<count {
            let index = (nextPick + offset) % count
            guard let connection = connections[index], connection.availableSlots > 0 else { continue }
            if connection.inFlightCount < bestLoad {
                best = index
                bestLoad = connection.inFlightCount
            }
        }
        nextPick = (nextPick + 1) % count
        return best
    }

    /// Reports a request that never reached a connection, on the next loop turn (never from inside `submit`).
    func fail(_ tag: UInt64, _ failure: TransportFailure) {
        loop.executeNextTurn { [weak self] in
            self?.delegate?.transport(completed: tag, outcome: .failed(failure))
        }
    }

    func reportFailure(_ error: any Error) {
        guard !reportedFailure else { return }
        reportedFailure = true
        loop.executeNextTurn { [weak self] in self?.delegate?.transportFailed(error) }
    }

    func closeIdleConnections() {
        for connection in connections.compactMap({ $0 }) + retiring where connection.inFlightCount == 0 {
            connection.close(abort: false, reason: "closing")
        }
    }

    func reportClosedIfDone() {
        guard closing, !reportedClosed else { return }
        guard connections.allSatisfy({ $0 == nil || $0?.state == .closed }), retiring.isEmpty else { return }
        reportedClosed = true
        closeTimer?.cancel()
        closeTimer = nil
        loop.executeNextTurn { [weak self] in self?.delegate?.transportDidClose() }
    }

    /// Errors a reconnect cannot cure, when they end a connection before the server's HTTP/2 preface: the
    /// server's identity or protocol is wrong, or ours is, or the server refused the handshake (TLS version,
    /// cipher suite, our certificate; with TLS 1.3 that alert arrives right after our side of the handshake).
    static func isPermanent(_ error: TransportError) -> Bool {
        switch error.kind {
        case .certificateVerifyFailed, .hostnameMismatch, .pinMismatch, .alpnNotH2, .invalidConfiguration, .proxyRefused,
             .handshakeRefused, .clientCertificateRejected:
            return true
        default:
            return false
        }
    }

    /// Acts on what an answer says about the provider token the request carried: an `ExpiredProviderToken` for
    /// the token in use re-signs it at once (once per token); any other answer shows the token was accepted. Gives
    /// up when fresh tokens keep being declared expired on first use (the clock is wrong).
    private func noteTokenAnswer(_ reason: APNSReason?, tokenSerial: Int) {
        guard let tokenCache, tokenSerial > 0 else { return }
        guard reason == .expiredProviderToken else {
            tokenCache.accepted(serial: tokenSerial)
            return
        }
        do {
            if case .refreshed = try tokenCache.invalidate(serial: tokenSerial) { try refreshHeaders() }
        } catch {
            reportFailure(error)
        }
        if let problem = tokenCache.clockProblem(limit: configuration.stopAfterTokensExpiredOnFirstUse) {
            reportFailure(TransportError(.providerTokenRejected, problem))
        }
    }

    // MARK: - APNSClientConnectionOwner

    func connection(
        _ connection: APNSClientConnection, completed tag: UInt64, outcome: PushOutcome,
        tokenSerial: Int
    ) {
        if case .answered(let answer) = outcome { noteTokenAnswer(answer.reason, tokenSerial: tokenSerial) }
        delegate?.transport(completed: tag, outcome: outcome)
        if closing, connection.inFlightCount == 0, connection.state != .closed {
            connection.close(abort: false, reason: "closing")
        }
    }

    func connectionBecameReady(_ connection: APNSClientConnection) {
        delegate?.transportHasFreeSlots()
    }

    func connectionSlotsChanged(_ connection: APNSClientConnection) {
        let index = connection.id
        if connection.state == .draining, connections[index] === connection {
            // GOAWAY: the old connection retires (finishing its open streams) and a replacement opens now.
            connections[index] = nil
            dirty.remove(index)
            retiring.append(connection)
            if !closing, reconnectTimers[index] == nil {
                // At once after a working connection; with back-off while connections end without answers.
                if connection.hadAnswer { failedConnects[index] = 0 } else { failedConnects[index] += 1 }
                let failures = failedConnects[index]
                if !configuration.reconnect.allowsRetry(afterAttempts: failures), readyConnectionCount == 0 {
                    reportFailure(TransportError(.closedByPeer, "every connection ended without an answer, \(failures) in a row"))
                    return
                }
                let delay = failures == 0 ? 0 : configuration.reconnect.delay(afterAttempt: failures, using: &generator)
                reconnectTimers[index] = loop.schedule(after: delay) { [weak self] in
                    guard let self else { return }
                    self.reconnectTimers[index] = nil
                    if self.connections[index] == nil { self.open(index) }
                }
            }
        }
        delegate?.transportHasFreeSlots()
    }

    func connection(_ connection: APNSClientConnection, closedWith error: TransportError?) {
        let index = connection.id
        let isCurrent = connections[index] === connection
        if isCurrent {
            connections[index] = nil
            dirty.remove(index)
        }
        retiring.removeAll { $0 === connection }
        if closing {
            reportClosedIfDone()
            return
        }
        guard isCurrent, reconnectTimers[index] == nil else { return }
        if connection.hadAnswer { failedConnects[index] = 0 } else { failedConnects[index] += 1 }
        if let error, !connection.serverSpoke, Self.isPermanent(error) {
            reportFailure(error)
            return
        }
        let attempts = failedConnects[index]
        if !configuration.reconnect.allowsRetry(afterAttempts: attempts), readyConnectionCount == 0 {
            reportFailure(TransportError(error?.kind ?? .connectFailed,
                                         "no connection after \(attempts) attempts: \(error?.detail ?? "closed")"))
            return
        }
        let delay = configuration.reconnect.delay(afterAttempt: max(1, attempts), using: &generator)
        reconnectTimers[index] = loop.schedule(after: delay) { [weak self] in self?.open(index) }
        delegate?.transportHasFreeSlots()
    }
}
