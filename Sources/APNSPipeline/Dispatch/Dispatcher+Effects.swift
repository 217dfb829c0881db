/// A call the dispatcher owes the transport, run on the next loop turn rather than where it was decided.
///
/// Answers arrive inside the transport's own callbacks (a socket read, or a `close` that answers what it holds).
/// Calling the transport back from there would re-enter it mid-delivery: a pool closed from inside its answer
/// callback can no longer tell requests that never left from requests whose answer was lost. So calls decided
/// inside a callback are queued here, and run once the callback has returned (`transportCallbackDepth` says
/// where the dispatcher is).
enum DeferredEffect: Equatable {
    /// Send what the free slots and the window allow, read records, flush.
    case pump
    /// Close the transport now: what it holds comes back (never sent: `notSent`; sent: `answerLost`), then
    /// `transportDidClose`.
    case closeTransport
}

extension Dispatcher {
    /// Queues `effect` (once) for the next loop turn.
    func schedule(_ effect: DeferredEffect) {
        guard !phase.hasEnded, !deferredEffects.contains(effect) else { return }
        deferredEffects.append(effect)
        guard deferredEffects.count == 1 else { return }  // the turn that runs the first one runs them all
        scheduler.schedule(after: 0) { [weak self] in self?.runDeferredEffects() }
    }

    /// Runs the queued effects in order; effects they queue wait for the following turn.
    private func runDeferredEffects() {
        let effects = deferredEffects
        deferredEffects = []
        for effect in effects where !phase.hasEnded {
            switch effect {
            case .pump: pump()
            case .closeTransport: transport.close(gracePeriod: 0)  // what is still in flight comes back
            }
        }
    }

    func schedulePump() {
        schedule(.pump)
    }

    /// Moves to closing and closes the transport: at once from the dispatcher's own code (a pump, a timer), so
    /// that requests submitted but not yet flushed never leave without their journal entry; on the next loop turn
    /// from inside a transport callback. A close still waiting from a callback runs now if asked for again here.
    func closeTransport() {
        let newlyClosing = phase.closeTransport()
        if transportCallbackDepth > 0 {
            if newlyClosing { schedule(.closeTransport) }
        } else if newlyClosing || deferredEffects.contains(.closeTransport) {
            deferredEffects.removeAll { $0 == .closeTransport }
            transport.close(gracePeriod: 0)  // what is still in flight comes back
        }
    }

    /// Runs `body` as the handling of one transport callback: transport calls it leads to wait for the next turn.
    func handlingTransportCallback(_ body: () -> Void) {
        transportCallbackDepth += 1
        defer { transportCallbackDepth -= 1 }
        body()
    }
}
