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
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = EventLoopInterest(rawValue: 1)
    public static let write = EventLoopInterest(rawValue: 2)
    public static let none: EventLoopInterest = []
}
