internal import CLinux  // <sys/epoll.h>
internal import Glibc

/// An epoll-based event loop: owns the epoll descriptor, the table of registered descriptors and their handlers,
/// the timer heap, the work queued for its next turn, and a reusable read buffer. Confined to the thread that
/// runs it (no locks on the hot path); other threads talk to it only through `handle`.
///
/// Registered handlers are retained until `deregister`; descriptors stay owned by whoever registered them (the
/// loop never closes them; deregister before closing).
public final class EventLoop {
    struct Registration {
        let handler: any EventLoopHandler
        var interest: EventLoopInterest
        /// Distinguishes a descriptor number reused after close from the one an epoll event was queued for.
        let generation: UInt32
    }

    /// Size of the buffer `withReadBuffer` lends: several TLS records' worth.
    static let readBufferSize = 64 * 1024
    private static let maxEventsPerWait = 256
    private static let mailboxGeneration: UInt32 = 0

    let epollFD: Int32
    let mailbox: EventLoopMailbox
    @exclusivity(unchecked)
    var registrations: [Registration?] = []
    @exclusivity(unchecked)
    var nextGeneration: UInt32 = 1
    @exclusivity(unchecked)
    private var events: [epoll_event]
    @exclusivity(unchecked)
    private var postedWork: [EventLoopMailbox.Work] = []
    @exclusivity(unchecked)
    private var nextTurnWork: [() -> Void] = []
    @exclusivity(unchecked)
    private var runningNextTurnWork: [() -> Void] = []
    @exclusivity(unchecked)
    private var stopRequested = false
    @exclusivity(unchecked)
    private var ownerThread: pthread_t
    @exclusivity(unchecked)
    private var readBuffer: [UInt8]
    @exclusivity(unchecked)
    private var readBufferLent = false
    @exclusivity(unchecked)
    private var turnInstant: EventLoopInstant?
    @exclusivity(unchecked)
    private var turnCount: UInt64 = 0
    /// The time a loop with a manual clock reads (nil: the monotonic clock).
    @exclusivity(unchecked)
    private var manualTime: EventLoopInstant?
    /// On the monotonic clock: the pauses of the process, which the loop's time leaves out.
    @exclusivity(unchecked)
    private var pauseDetector = EventLoopPauseDetector()

    @exclusivity(unchecked)
    var timerHeap = EventLoopTimerHeap()
    @exclusivity(unchecked)
    var cancelledTimers = 0
    @exclusivity(unchecked)
    var timerSequence: UInt64 = 0
    @exclusivity(unchecked)
    private var pendingResolutions: [UInt64: (Result<[SocketAddress], TransportError>) -> Void] = [:]
    @exclusivity(unchecked)
    private var resolutionCounter: UInt64 = 0

    /// Creates the loop for the calling thread. Also makes the process ignore `SIGPIPE`: a write to a socket the
    /// peer closed must fail with `EPIPE`, not kill the process (OpenSSL writes with plain `write(2)`).
    ///
    /// - Parameter clock: where the loop reads the time; tests pass `.manual` to move time on by hand
    ///   (`advanceTime(bySeconds:)`), so timeouts of seconds take none.
    public init(clock: Clock = .monotonic) throws(TransportError) {
        if case .manual(let start) = clock { manualTime = start }
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw TransportError.system("epoll_create1", errno) }
        let mailbox: EventLoopMailbox
        do {
            mailbox = try EventLoopMailbox()
        } catch {
            Glibc.close(fd)
            throw error
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.eventData(fd: mailbox.eventFD, generation: Self.mailboxGeneration)
        guard epoll_ctl(fd, EPOLL_CTL_ADD, mailbox.eventFD, &event) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TransportError.system("epoll_ctl(eventfd)", code)
        }
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
        epollFD = fd
        self.mailbox = mailbox
        events = Array(repeating: epoll_event(), count: Self.maxEventsPerWait)
        readBuffer = Array(repeating: 0, count: Self.readBufferSize)
        ownerThread = pthread_self()
    }

    deinit {
        mailbox.close()
        Glibc.close(epollFD)
    }

    /// The Sendable handle other threads use to post work and stop the loop.
    public var handle: EventLoopHandle { EventLoopHandle(mailbox: mailbox) }

    /// Whether the caller is on the thread that created or last ran this loop.
    public var isInLoopThread: Bool { pthread_equal(pthread_self(), ownerThread) != 0 }

    /// Where a loop reads the time.
    public enum Clock: Sendable {
        /// The system's monotonic clock.
        case monotonic
        /// A clock that starts at this instant and moves only through `advanceTime(bySeconds:)`.
        case manual(EventLoopInstant)
    }

    /// The current time: the manual clock's, or the monotonic clock's less every pause of the process (stopped
    /// with SIGSTOP, a frozen container, a paused VM: `EventLoopPauseDetector`), so time the process did not run
    /// makes no timer and no timeout due: time is judged while the process runs.
    public func now() -> EventLoopInstant {
        if let manualTime { return manualTime }
        return pauseDetector.loopTime(at: .now())
    }

    /// Moves a manual clock on; the timers it makes due fire on the next turn. Does nothing on a monotonic clock.
    public func advanceTime(bySeconds seconds: Double) {
        manualTime = manualTime?.advanced(bySeconds: seconds)
    }

    /// The time the current turn woke from its wait, read once per turn; outside a turn, the current time. Stamps
    /// that many requests of one turn take (when each was sent, when its answer came) need no clock read each:
    /// an answer handled in this turn arrived by this time at the latest, and one turn lasts milliseconds.
    public var turnTime: EventLoopInstant { turnInstant ?? now() }

    /// The number of the turn running now (the first is 1); nil outside a turn. Work that needs doing once a turn
    /// rather than once a request keys on it.
    public var currentTurn: UInt64? { turnInstant == nil ? nil : turnCount }

    /// Runs turns until `stop()` (on the loop) or `handle.stop()` (from anywhere).
    public func run() {
        ownerThread = pthread_self()
        while !stopRequested {
            runOnce(timeout: nil)
        }
        stopRequested = false
    }

    /// Makes `run()` return after the current turn.
    public func stop() {
        stopRequested = true
    }

    /// Ends the loop's life once it has stopped for good: cancels every timer, deregisters every descriptor and
    /// drops queued work and pending resolutions, none of them run. Timer actions, work and handlers often hold
    /// the loop (or objects that hold it), so without this the loop and everything reachable from it would keep
    /// each other alive after the last outside reference goes. Descriptors stay open until their owners close
    /// them. Later posts through `handle` are refused; the loop must not run again.
    public func shutdown() {
        mailbox.close()
        for entry in timerHeap.entries { entry.action = nil }
        timerHeap = EventLoopTimerHeap()
        cancelledTimers = 0
        for fd in registrations.indices where registrations[fd] != nil { deregister(Int32(fd)) }
        nextTurnWork.removeAll()
        postedWork.removeAll()
        pendingResolutions.removeAll()
    }

    /// Queues `work` to run on this thread after a turn's I/O and timers: at the end of the current turn when
    /// queued from a handler or timer (a place to flush what several callbacks produced, once), else at the end
    /// of the next one. Work queued by such work waits for the following turn. The loop does not block while
    /// work is queued. Never runs inside the call that queued it.
    public func executeNextTurn(_ work: @escaping () -> Void) {
        nextTurnWork.append(work)
    }

    /// One turn: waits for readiness (at most `timeout` seconds, nil = until something happens or the next
    /// timer), dispatches it, fires due timers, runs next-turn work. Returns how many events, timers and work
    /// items it handled.
    ///
    /// Before any timer fires, input that became ready since the wait is read too (`dispatchInputBeforeTimers`):
    /// a timeout is judged only once the answers waiting in the sockets have been taken in.
    @discardableResult
    public func runOnce(timeout: Double?) -> Int {
        ownerThread = pthread_self()
        let ready = wait(milliseconds: waitMilliseconds(timeout: timeout))
        turnInstant = now()
        turnCount &+= 1
        defer { turnInstant = nil }
        var handled = 0
        for index in 0..<ready {
            handled += dispatch(events[index])
        }
        handled += dispatchInputBeforeTimers()
        handled += fireDueTimers()
        if !nextTurnWork.isEmpty {
            swap(&nextTurnWork, &runningNextTurnWork)
            for work in runningNextTurnWork { work() }
            handled += runningNextTurnWork.count
            runningNextTurnWork.removeAll(keepingCapacity: true)
        }
        return handled
    }

    /// Lends the loop's read buffer (`readBufferSize` bytes) for the duration of `body`, which reads into it in
    /// place; what it holds means nothing outside `body`. A nested call (a handler reading while another read is
    /// being delivered) gets a temporary buffer instead.
    func withReadBuffer<Result, Failure: Error>(_ body: (inout [UInt8]) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        guard !readBufferLent else {
            var temporary = [UInt8](repeating: 0, count: Self.readBufferSize)
            return try body(&temporary)
        }
        readBufferLent = true
        defer { readBufferLent = false }
        return try body(&readBuffer)
    }

    func beginResolution(_ completion: @escaping (Result<[SocketAddress], TransportError>) -> Void) -> UInt64 {
        resolutionCounter += 1
        pendingResolutions[resolutionCounter] = completion
        return resolutionCounter
    }

    func finishResolution(_ request: UInt64, _ result: Result<[SocketAddress], TransportError>) {
        pendingResolutions.removeValue(forKey: request)?(result)
    }

    private func waitMilliseconds(timeout: Double?) -> Int32 {
        if !nextTurnWork.isEmpty { return 0 }
        var limit: Double? = timeout.map { max(0, $0) }
        if let first = timerHeap.first {
            let untilTimer = max(0, first.deadline.seconds(since: now()))
            limit = min(limit ?? untilTimer, untilTimer)
        }
        guard let limit else {
            pauseDetector.willWait(seconds: nil)
            return -1
        }
        // Round up so a timer is never polled a little early, then spun on with zero timeouts.
        let milliseconds = (limit * 1000).rounded(.up)
        let wait = milliseconds >= Double(Int32.max) ? Int32.max : Int32(milliseconds)
        pauseDetector.willWait(seconds: Double(wait) / 1000)
        return wait
    }

    /// When a timer is due: polls for readiness without waiting and dispatches it, so the timer's action judges
    /// a connection with the input that arrived meanwhile read (after a wait cut short by a signal, or a stop of
    /// the process, the wait itself may have returned nothing).
    private func dispatchInputBeforeTimers() -> Int {
        guard let first = timerHeap.first, first.deadline <= now() else { return 0 }
        let ready = wait(milliseconds: 0)
        var handled = 0
        for index in 0..<ready {
            handled += dispatch(events[index])
        }
        return handled
    }

    private func wait(milliseconds: Int32) -> Int {
        let count = epoll_wait(epollFD, &events, Int32(events.count), milliseconds)
        return count > 0 ? Int(count) : 0  // EINTR and friends: a turn with no events
    }

    private func dispatch(_ event: epoll_event) -> Int {
        let data = event.data.u64
        let fd = Int32(truncatingIfNeeded: data & 0xffff_ffff)
        let generation = UInt32(truncatingIfNeeded: data >> 32)
        if generation == Self.mailboxGeneration {
            runPostedWork()
            return 1
        }
        guard let registration = lookup(fd, generation) else { return 0 }
        let flags = event.events
        let failed = flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        if registration.interest.isEmpty {
            if failed { registration.handler.hangup() }  // level-triggered: the handler must deregister
            return 1
        }
        if registration.interest.contains(.read) && (failed || flags & EPOLLIN.rawValue != 0) {
            registration.handler.readable()
        }
        // The read handler may have deregistered the descriptor or changed its interest.
        if let current = lookup(fd, generation), current.interest.contains(.write),
            failed || flags & EPOLLOUT.rawValue != 0
        {
            current.handler.writable()
        }
        return 1
    }

    private func runPostedWork() {
        if mailbox.drain(into: &postedWork) { stopRequested = true }
        for work in postedWork { work(self) }
        postedWork.removeAll(keepingCapacity: true)
    }

    private func lookup(_ fd: Int32, _ generation: UInt32) -> Registration? {
        guard fd >= 0, Int(fd) < registrations.count, let registration = registrations[Int(fd)],
            registration.generation == generation
        else { return nil }
        return registration
    }

    static func eventData(fd: Int32, generation: UInt32) -> UInt64 {
        UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
    }

    static func epollFlags(_ interest: EventLoopInterest) -> UInt32 {
        var flags: UInt32 = 0  // EOF shows up as EPOLLIN; EPOLLRDHUP would spin while reading is paused
        if interest.contains(.read) { flags |= EPOLLIN.rawValue }
        if interest.contains(.write) { flags |= EPOLLOUT.rawValue }
        return flags
    }
}

// MARK: - Registration

extension EventLoop {
    /// Starts watching `fd` for `interest`, calling `handler` (retained until `deregister`) on readiness.
    /// Throws when `fd` is already registered or epoll refuses it.
    public func register(_ fd: Int32, interest: EventLoopInterest, handler: any EventLoopHandler)
        throws(TransportError)
    {
        guard fd >= 0 else { throw TransportError(.invalidConfiguration, "cannot register descriptor \(fd)") }
        if Int(fd) >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - registrations.count))
        }
        guard registrations[Int(fd)] == nil else {
            throw TransportError(.invalidConfiguration, "descriptor \(fd) is already registered")
        }
        let generation = nextGeneration
        nextGeneration = nextGeneration == UInt32.max ? 1 : nextGeneration + 1  // 0 is the mailbox's
        var event = epoll_event()
        event.events = Self.epollFlags(interest)
        event.data.u64 = Self.eventData(fd: fd, generation: generation)
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw TransportError.system("epoll_ctl(ADD, \(fd))", errno)
        }
        registrations[Int(fd)] = Registration(handler: handler, interest: interest, generation: generation)
    }

    /// Changes what `fd` is watched for; does nothing when the interest is unchanged (no system call). Returns
    /// false when `fd` is not registered or epoll refuses the change.
    @discardableResult
    public func setInterest(_ interest: EventLoopInterest, for fd: Int32) -> Bool {
        guard fd >= 0, Int(fd) < registrations.count, var registration = registrations[Int(fd)] else { return false }
        if registration.interest == interest { return true }
        var event = epoll_event()
        event.events = Self.epollFlags(interest)
        event.data.u64 = Self.eventData(fd: fd, generation: registration.generation)
        guard epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) == 0 else { return false }
        registration.interest = interest
        registrations[Int(fd)] = registration
        return true
    }

    /// The interest `fd` is registered with, or nil when it is not registered.
    public func interest(for fd: Int32) -> EventLoopInterest? {
        guard fd >= 0, Int(fd) < registrations.count else { return nil }
        return registrations[Int(fd)]?.interest
    }

    /// Stops watching `fd` and releases its handler. Events already collected for it in this turn are dropped.
    /// Call before closing the descriptor.
    public func deregister(_ fd: Int32) {
        guard fd >= 0, Int(fd) < registrations.count, registrations[Int(fd)] != nil else { return }
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
        registrations[Int(fd)] = nil
    }

    /// How many descriptors are registered (for tests and diagnostics).
    public var registeredCount: Int { registrations.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }
}

// MARK: - Timers

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
    /// timer that re-arms itself for "now" cannot starve I/O. The turn's time moves on to now first: a timer's
    /// action never sees a `turnTime` before its own deadline (the turn may have woken for I/O a moment before
    /// the timer fell due), or work it finds not yet due at that time would wait for a wake-up that already fired.
    func fireDueTimers() -> Int {
        guard let first = timerHeap.first else { return 0 }
        let now = self.now()
        guard first.deadline <= now else { return 0 }
        if turnInstant != nil { turnInstant = now }
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

// MARK: - EventLoopHandler

/// What an `EventLoop` calls when a registered file descriptor is ready. Implemented by the objects that own a
/// socket (a listener, a TLS connection); called only on the loop's thread, never concurrently.
///
/// The loop is level-triggered: a handler that leaves data unread is called again on the next turn. Hang-ups and
/// socket errors (`EPOLLHUP`, `EPOLLERR`) arrive as `readable()` and/or `writable()` according to the interest,
/// so the handler finds the cause in its next `read`/`write`/`SO_ERROR`; only when it has no interest at all
/// does the loop call `hangup()`.
public protocol EventLoopHandler: AnyObject {
    /// The descriptor has data to read, or end-of-file, or an error pending.
    func readable()
    /// The descriptor can take more data (or a non-blocking connect finished, successfully or not).
    func writable()
    /// The peer hung up or the descriptor is in error while the handler had no read or write interest.
    func hangup()
}

/// Which readiness a registered descriptor wants to hear about.
public struct EventLoopInterest: OptionSet, Hashable, Sendable {
    /// The interest bits.
    public let rawValue: UInt8
    /// An interest from its bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Wake when the descriptor is readable.
    public static let read = EventLoopInterest(rawValue: 1)
    /// Wake when the descriptor is writable.
    public static let write = EventLoopInterest(rawValue: 2)
    /// Wake for neither.
    public static let none: EventLoopInterest = []
}

// MARK: - EventLoopBound

/// Carries a loop-confined value (a pool, a server, a connection) through `EventLoopHandle.execute`, which only
/// accepts Sendable closures: the value may be taken out only on its own loop's thread, which is checked.
/// A signal handler on a dispatch queue can thus reach the pool: `handle.execute { bound.value(in: $0).close() }`.
public struct EventLoopBound<Value>: @unchecked Sendable {
    // Sendable by construction: `value` is read only on the loop's thread (checked in `value(in:)`).
    private let value: Value
    private let loop: ObjectIdentifier

    /// Wraps `value`, which belongs to `loop`; call on the loop's thread.
    public init(_ value: Value, loop: EventLoop) {
        precondition(loop.isInLoopThread, "EventLoopBound created off its loop's thread")
        self.value = value
        self.loop = ObjectIdentifier(loop)
    }

    /// The value, from inside work running on its loop (the `EventLoop` that `execute` passes in).
    public func value(in loop: EventLoop) -> Value {
        precondition(
            ObjectIdentifier(loop) == self.loop && loop.isInLoopThread,
            "EventLoopBound value taken off its loop")
        return value
    }
}
