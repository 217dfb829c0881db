/// The contract between the bulk dispatcher and whatever carries its requests to APNs: the connection pool in
/// production, an in-memory fake in tests. Everything happens on one event-loop thread.
///
/// The dispatcher submits while `freeSlots` is positive, then calls `flush()` once per loop turn (after it has
/// journaled what it submitted, so a crash can never lose the fact that a request left). The transport answers
/// every submitted tag exactly once through its delegate, whatever happens to the connection.
public protocol PushTransport: AnyObject {
    var delegate: (any PushTransportDelegate)? { get set }

    /// How many requests can start right now: free stream slots on ready connections, within each server's
    /// current `SETTINGS_MAX_CONCURRENT_STREAMS`.
    var freeSlots: Int { get }

    /// Starts one request. `tag` comes back with its outcome, always on a later call, never from inside `submit`
    /// (a request that cannot start is reported on the next loop turn). Only called while `freeSlots > 0`.
    func submit(_ notification: PushNotification, tag: UInt64)

    /// Writes what the submits since the last flush produced to the network.
    func flush()

    /// Stops starting new work; requests still in flight are answered or, after `gracePeriod` seconds, reported
    /// as `.failed(.answerLost)`; then the delegate hears `transportDidClose`.
    func close(gracePeriod: Double)
}

/// Hears from a `PushTransport`, on the event-loop thread.
public protocol PushTransportDelegate: AnyObject {
    /// One submitted request ended: APNs answered or the transport failed it.
    /// For `.answered` outcomes the transport has already acted on connection-level meaning (for example it has
    /// re-signed the provider token after `ExpiredProviderToken`).
    func transport(completed tag: UInt64, outcome: PushOutcome)

    /// Slots became free (a connection became ready, the server raised its stream limit, streams closed).
    func transportHasFreeSlots()

    /// The transport cannot work at all and will not recover by retrying: a pin mismatch, a certificate the
    /// server refuses, a TLS handshake it refuses (no version or cipher suite in common), a server without
    /// HTTP/2, fresh provider tokens declared expired on arrival (a wrong clock), the reconnect limit exhausted.
    /// Requests in flight are still answered through `transport(completed:…)`.
    func transportFailed(_ error: any Error)

    /// The transport finished closing; nothing more will be reported.
    func transportDidClose()
}
