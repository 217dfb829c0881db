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

    /// The most requests the sender expects to keep in flight until it says otherwise (its in-flight window's
    /// reach), told before a `flush()` when it changes: a transport that opens connections as the load grows need
    /// not open room for more (beyond its spares). Until it is told, no limit is known.
    func expectInFlight(atMost reach: Int)

    /// Stops starting new work; requests still in flight are answered or, after `gracePeriod` seconds, reported
    /// as `.failed(.answerLost)`; then the delegate hears `transportDidClose`.
    func close(gracePeriod: Double)
}

extension PushTransport {
    /// Ignores it: a transport whose room does not grow with the load has nothing to size.
    public func expectInFlight(atMost reach: Int) {}
}

/// Hears from a `PushTransport`, on the event-loop thread.
public protocol PushTransportDelegate: AnyObject {
    /// One submitted request ended: APNs answered or the transport failed it.
    /// For `.answered` outcomes the transport has already acted on connection-level meaning (for example it has
    /// re-signed the provider token after `ExpiredProviderToken`).
    func transport(completed tag: UInt64, outcome: consuming PushOutcome)

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

// MARK: - PushOutcome

/// What came back for one push request: an APNs answer, or a transport failure instead of one.
public enum PushOutcome: Hashable, Sendable {
    case answered(PushAnswer)
    case failed(TransportFailure)

    /// The answer, when APNs gave one.
    public var answer: PushAnswer? {
        if case .answered(let answer) = self { return answer }
        return nil
    }
}

// MARK: - PushAnswer

/// An APNs answer as read off the wire: the status, the ids it carries and the parsed error body. Immutable, as
/// `PushNotification` is, so that building one copies nothing.
public struct PushAnswer: Sendable, Hashable {
    /// The HTTP status APNs answered with.
    public let status: Int
    /// The `apns-id` header of the answer; nil when it had none.
    public let apnsID: String?
    /// Sent by the development environment only.
    public let apnsUniqueID: String?
    /// The reason in the answer's body; nil for a success or a body without one.
    public let reason: APNSReason?
    /// For 410: milliseconds since the epoch at which APNs last confirmed the token was invalid.
    public let timestamp: Int64?

    /// An answer from its parts.
    public init(
        status: Int, apnsID: String? = nil, apnsUniqueID: String? = nil, reason: APNSReason? = nil,
        timestamp: Int64? = nil
    ) {
        self.status = status
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.reason = reason
        self.timestamp = timestamp
    }

    /// An answer with its error body parsed by `APNSErrorBody`.
    public init(status: Int, apnsID: String?, apnsUniqueID: String?, body: some Collection<UInt8>) {
        let parsed = APNSErrorBody(parsing: body)
        self.init(
            status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID, reason: parsed.reason,
            timestamp: parsed.timestamp)
    }
}

// MARK: - TransportFailure

/// What can happen to a request on the wire instead of an APNs answer, split by whether APNs may have processed it.
public enum TransportFailure: Hashable, Sendable, CustomStringConvertible {
    /// The server refused the stream (`RST_STREAM REFUSED_STREAM`): not processed, safe to send again.
    case refusedStream
    /// The stream was above a GOAWAY's last-stream-id: not processed, safe to send again.
    case unprocessedAfterGoaway
    /// The request never left, or cannot have been processed: no connection could be made, it was still queued
    /// when its connection died, or its connection died before the server's first HTTP/2 SETTINGS frame.
    case notSent(String)
    /// The request was sent, and its answer was lost: a GOAWAY at or below its stream, a dropped connection,
    /// a reset other than REFUSED_STREAM, or a timeout. APNs may or may not have processed it.
    case answerLost(String)

    /// Whether the request certainly did not reach APNs, so sending it again cannot duplicate it: refused, above a
    /// GOAWAY's last-stream-id, or not sent. An answer lost is in doubt.
    public var isSafeToResend: Bool {
        switch self {
        case .refusedStream, .unprocessedAfterGoaway, .notSent: return true
        case .answerLost: return false
        }
    }

    /// The outcome as one printable line.
    public var description: String {
        switch self {
        case .refusedStream: return "stream refused by the server"
        case .unprocessedAfterGoaway: return "not processed before GOAWAY"
        case .notSent(let why): return "not sent: \(why)"
        case .answerLost(let why): return "answer lost: \(why)"
        }
    }
}
