extension EventLoop {
    /// Runs `action` on this loop at `deadline` (or on the next turn if it has passed). Keep the returned token to
    /// cancel it.
    @discardableResult
    public func schedule(at deadline: EventLoopInstant, _ action: @escaping () -> Void) -> EventLoopTimer {
        timerSequence &+= 1
        let entry = EventLoopTimerEntry(deadline: deadline, sequence: timerSequence, action: action)
        timerHeap.push(entry)
        return EventLoopTimer(entry: entry, loop: self)
    }

    /// Runs `action` on this loop `seconds` from now.
    @discardableResult
    public func schedule(after seconds: Double, _ action: @escaping () -> Void) -> EventLoopTimer {
        schedule(at: now().advanced(bySeconds: seconds), action)
    }

    /// Cancels `timer` so its action never runs. Cancelled entries leave the heap lazily; when they outnumber the
    /// live ones the heap is rebuilt, so short-lived timeouts that are nearly always cancelled do not pile up.
    public func cancelTimer(_ timer: EventLoopTimer) {
        guard timer.entry.action != nil else { return }
        timer.entry.action = nil
        cancelledTimers += 1
        if timerHeap.count > 64 && cancelledTimers * 2 > timerHeap.count {
            timerHeap.removeCancelled()
            cancelledTimers = 0
        }
    }

    /// How many timers are pending (for tests and diagnostics).
    public var pendingTimerCount: Int { timerHeap.entries.reduce(0) { $0 + ($1.action == nil ? 0 : 1) } }

    /// Fires the timers due now, in deadline order. Timers scheduled while firing wait for the next turn, so a
    /// timer that re-arms itself for "now" cannot starve I/O.
    func fireDueTimers() -> Int {
        guard let first = timerHeap.first else { return 0 }
        let now = self.now()
        guard first.deadline <= now else { return 0 }
        let lastSequence = timerSequence
        var fired = 0
        while let next = timerHeap.first, next.deadline <= now, next.sequence <= lastSequence {
            _ = timerHeap.popFirst()
            guard let action = next.action else {
                cancelledTimers = max(0, cancelledTimers - 1)
                continue
            }
            next.action = nil
            action()
            fired += 1
        }
        return fired
    }
}
