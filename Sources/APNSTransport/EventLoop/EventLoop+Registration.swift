internal import CLinux  // <sys/epoll.h>
internal import Glibc

extension EventLoop {
    /// Starts watching `fd` for `interest`, calling `handler` (retained until `deregister`) on readiness.
    /// Throws when `fd` is already registered or epoll refuses it.
    public func register(_ fd: Int32, interest: EventLoopInterest, handler: any EventLoopHandler)
        throws(TransportError) {
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
