import APNSCore

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
    mutating func connectionStoppedTakingStreams(_ id: ConnectionID, hadAnswer: Bool, inFlight: Int) -> [Action] {
        guard !isClosing, let slot = slot(of: id) else { return [] }
        let attempts: Int
        switch slots[slot] {
        case .starting(_, let previous), .active(_, _, let previous): attempts = previous
        case .backingOff, .draining, .closed: return []
        }
        retired[id] = inFlight
        return replaceConnection(inSlot: slot, attempts: attempts, hadAnswer: hadAnswer, ending: .retired)
    }

    /// The connection closed; every request it carried has been reported. `error` is nil for a clean close.
    mutating func connectionClosed(
        _ id: ConnectionID, error: TransportError?, hadAnswer: Bool, serverSpoke: Bool
    ) -> [Action] {
        answering.remove(id)
        if retired.removeValue(forKey: id) != nil { return reportClosedIfDone() }
        guard let slot = slot(of: id) else { return [] }
        let attempts: Int
        switch slots[slot] {
        case .starting(_, let previous), .active(_, _, let previous): attempts = previous
        case .draining, .backingOff, .closed: attempts = 0
        }
        if isClosing {
            slots[slot] = .closed
            return reportClosedIfDone()
        }
        return replaceConnection(
            inSlot: slot, attempts: attempts, hadAnswer: hadAnswer, ending: .closed(error, serverSpoke: serverSpoke))
    }

    /// A connection could not even be set up (its HTTP/2 session could not be created): the slot stays empty and
    /// the pool reports that error.
    mutating func openFailed(_ id: ConnectionID) -> [Action] {
        guard let slot = slot(of: id) else { return [] }
        slots[slot] = .closed
        return reportClosedIfDone()
    }

    /// Stops taking new requests. Connections with nothing open close now; the others drain, and after
    /// `gracePeriod` seconds (at once for 0) whatever is still open is aborted and reported in doubt.
    mutating func closeRequested(gracePeriod: Double) -> [Action] {
        var actions: [Action] = []
        if !isClosing {
            isClosing = true
            for slot in slots.indices {
                guard case .backingOff = slots[slot] else { continue }
                slots[slot] = .closed
                actions.append(.cancel(.open(slot: slot)))
            }
        }
        if closeDeadlineScheduled {
            closeDeadlineScheduled = false
            actions.append(.cancel(.closeDeadline))
        }
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
            case .backingOff, .closed:
                break
            }
        }
        for (id, inFlight) in retired.sorted(by: { $0.key.value < $1.key.value }) where now || inFlight == 0 {
            actions.append(inFlight == 0 ? .close(id) : .abort(id))
        }
        if !now {
            closeDeadlineScheduled = true
            actions.append(.schedule(.closeDeadline, after: gracePeriod))
        }
        return actions + reportClosedIfDone()
    }

    /// The one reconnect decision, for a connection that closed or retired: a handshake failure no reconnect can
    /// cure ends the pool; so do `reconnect.maximumAttempts` connections in a row over the pool that ended without
    /// an answer (refused, a failed handshake, no SETTINGS, a stall, a protocol error, a close), while no open
    /// connection has answered, naming what the last one met; otherwise the slot opens a new connection, at once
    /// after a retired connection that had answered, else after the back-off delay (a connection that never
    /// answered counts as a failed attempt, so a server that drops every connection right after the handshake
    /// does not reset the back-off).
    private mutating func replaceConnection(
        inSlot slot: Int, attempts previous: Int, hadAnswer: Bool, ending: Ending
    ) -> [Action] {
        let attempts = hadAnswer ? 0 : previous + 1
        slots[slot] = .backingOff(attempts: attempts)
        if case .closed(let error?, serverSpoke: false) = ending, Self.isPermanent(error) {
            slots[slot] = .closed
            return [.reportFailure(error)]
        }
        var actions: [Action] = []
        if !hadAnswer {
            switch ending {
            case .retired: lastFailure = TransportError(.closedByPeer, "every connection ended without an answer")
            case .closed(let error, _):
                lastFailure = error ?? TransportError(.closedByPeer, "the server closed the connection without answering")
            }
            failuresInARow += 1
            if failuresInARow == 1 {
                failureWindowOver = false
                actions.append(.schedule(.failureWindow, after: failureWindow))
            }
            let gaveUp = giveUpIfFailing()
            if !gaveUp.isEmpty {
                slots[slot] = .closed
                return actions + gaveUp
            }
        }
        let delay: Double
        switch ending {
        case .retired: delay = attempts == 0 ? 0 : reconnect.delay(afterAttempt: attempts, using: &random)
        case .closed: delay = reconnect.delay(afterAttempt: max(1, attempts), using: &random)
        }
        return actions + [.schedule(.open(slot: slot), after: delay), .reportFreeStreams]
    }

    /// Gives up when `reconnect.maximumAttempts` connections in a row have failed over at least `failureWindow`
    /// seconds and no open connection answers: the failure names what the last one met and how many there were.
    mutating func giveUpIfFailing() -> [Action] {
        guard !reconnect.allowsRetry(afterAttempts: failuresInARow), failureWindowOver, !anyConnectionAnswering,
              let last = lastFailure else { return [] }
        return [.reportFailure(TransportError(last.kind, "\(last.detail), \(failuresInARow) connections in a row"))]
    }

    /// Whether an open connection has answered: the pool works, whatever the other slots meet.
    private var anyConnectionAnswering: Bool {
        slots.contains { state in
            if case .active(let id, _, _) = state { return answering.contains(id) }
            return false
        }
    }

    private mutating func reportClosedIfDone() -> [Action] {
        guard isClosing, !reportedClosed, retired.isEmpty, slots.allSatisfy({ $0 == .closed }) else { return [] }
        reportedClosed = true
        guard closeDeadlineScheduled else { return [.reportClosed] }
        closeDeadlineScheduled = false
        return [.cancel(.closeDeadline), .reportClosed]
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
}
