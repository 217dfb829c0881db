/// How a client connection finds and dials the addresses of the host it connects to (the proxy's, with a proxy):
/// pinned addresses instead of resolving (`--resolve`), the order to dial them in, the Happy Eyeballs head start,
/// and who hears how each attempt ended (docs/CONNECTING.md, "Addresses"). Loop-confined.
public struct DialPlan {
    /// Addresses to dial instead of resolving, by host and port.
    public var overrides: ResolveOverrides
    /// Seconds an attempt has to connect before the next address is dialed too (RFC 8305's "Connection Attempt
    /// Delay").
    public var attemptDelay: Double
    /// The order to dial the addresses found (the resolver's order, or the pinned one) in; nil: the families
    /// interleaved (RFC 8305 §4).
    public var order: (([SocketAddress]) -> [SocketAddress])?
    /// Hears how each attempt ended.
    public var report: ((SocketAddress, ConnectAttemptOutcome) -> Void)?

    /// The resolver's order with the families interleaved (RFC 8305 §4), a 250 ms head start, no one to report to.
    public init(
        overrides: ResolveOverrides = ResolveOverrides(), attemptDelay: Double = 0.25,
        order: (([SocketAddress]) -> [SocketAddress])? = nil,
        report: ((SocketAddress, ConnectAttemptOutcome) -> Void)? = nil
    ) {
        self.overrides = overrides
        self.attemptDelay = attemptDelay
        self.order = order
        self.report = report
    }

    /// `addresses` in the order to dial them.
    func ordered(_ addresses: [SocketAddress]) -> [SocketAddress] {
        order?(addresses) ?? AddressOrder.interleaved(addresses)
    }
}
