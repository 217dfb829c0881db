/// How one TCP connect attempt to one address ended, as `SocketConnector` reports it to whoever keeps the
/// addresses' health (`AddressHealth`).
public enum ConnectAttemptOutcome: Hashable, Sendable {
    /// The connection was made and is the one used.
    case connected
    /// The connect failed: refused, unreachable, or the socket could not be made.
    case failed
    /// No answer within the per-address connect timeout (a black hole: SYNs dropped).
    case timedOut
    /// Still pending when an address dialed after it, its head start over, connected: slower than the others at best.
    case outrun
    /// Given up because an address dialed before it connected first: says nothing about this one.
    case cancelled

    /// Whether the attempt counts against the address.
    var isFailure: Bool {
        switch self {
        case .failed, .timedOut, .outrun: true
        case .connected, .cancelled: false
        }
    }
}
