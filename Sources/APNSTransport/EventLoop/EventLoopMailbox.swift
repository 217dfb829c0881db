internal import CLinux  // <sys/eventfd.h>
internal import Glibc
import Synchronization

/// Owns the `eventfd` that wakes an `EventLoop` from other threads and the queue of work they post. Shared by
/// the loop and every `EventLoopHandle`, so the descriptor outlives whichever of them goes last; the only lock in
/// the transport, and never taken on the loop's hot path (only when the eventfd fired).
final class EventLoopMailbox: Sendable {
    typealias Work = @Sendable (EventLoop) -> Void

    struct State: ~Copyable {
        var work: [Work] = []
        var stopRequested = false
        var closed = false
        /// An eventfd write is outstanding; later posts need not write again.
        var wakePending = false
    }

    let eventFD: Int32
    private let state = Mutex(State())

    init() throws(TransportError) {
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw TransportError.system("eventfd", errno) }
        eventFD = fd
    }

    deinit {
        Glibc.close(eventFD)
    }

    /// Queues `work` and wakes the loop. False when the loop is gone (the work is dropped).
    func post(_ work: @escaping Work) -> Bool {
        let wake: Bool? = state.withLock { state in
            guard !state.closed else { return nil }
            state.work.append(work)
            if state.wakePending { return false }
            state.wakePending = true
            return true
        }
        guard let wake else { return false }
        if wake { signal() }
        return true
    }

    /// Asks the loop's `run()` to return after its current turn.
    func requestStop() {
        let wake: Bool = state.withLock { state in
            guard !state.closed else { return false }
            state.stopRequested = true
            if state.wakePending { return false }
            state.wakePending = true
            return true
        }
        if wake { signal() }
    }

    /// Called by the loop when the eventfd is readable: resets it, then takes the queued work (swapping it into
    /// `spare`, whose capacity is reused) and the stop request.
    func drain(into spare: inout [Work]) -> Bool {
        var counter: eventfd_t = 0
        _ = eventfd_read(eventFD, &counter)
        return state.withLock { state in
            state.wakePending = false
            swap(&state.work, &spare)
            let stop = state.stopRequested
            state.stopRequested = false
            return stop
        }
    }

    /// The loop is going away: later posts are refused.
    func close() {
        state.withLock { state in
            state.closed = true
            state.work.removeAll()
        }
    }

    private func signal() {
        _ = eventfd_write(eventFD, 1)
    }
}

/// The one piece of an `EventLoop` other threads may hold: posts work to the loop's thread and stops it. Signal
/// handlers (through `DispatchSource`), tests and the CLI's main thread use it.
public struct EventLoopHandle: Sendable {
    let mailbox: EventLoopMailbox

    /// Runs `work` on the loop's thread during its next turn, with the loop as argument. Returns false (and drops
    /// `work`) when the loop has been deallocated.
    @discardableResult
    public func execute(_ work: @escaping @Sendable (EventLoop) -> Void) -> Bool {
        mailbox.post(work)
    }

    /// Makes the loop's `run()` return after its current turn; safe from any thread.
    public func stop() {
        mailbox.requestStop()
    }
}
