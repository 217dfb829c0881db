/// What the server does with one request: the answer to send on its stream (nil: send none) and the
/// connection-level actions the glue performs, in order.
public struct MockDecision: Sendable, Hashable {
    /// The answer for the request's stream; nil when the stream is refused or the connection dropped.
    public let response: MockResponse?
    /// Connection-level actions, in the order to perform them (usually none: an empty array does not allocate).
    public let actions: [MockConnectionAction]

    public init(response: MockResponse?, actions: [MockConnectionAction] = []) {
        self.response = response
        self.actions = actions
    }
}

/// A connection-level action the network glue must perform for a decision. See each case for exactly what to do.
public enum MockConnectionAction: Sendable, Hashable {
    /// Send SETTINGS with SETTINGS_MAX_CONCURRENT_STREAMS = n now (not waiting for a delayed answer). Emitted once
    /// per connection, on the first request whose provider token (or client certificate) is valid.
    case raiseStreamLimit(Int)
    /// Send SETTINGS with SETTINGS_MAX_CONCURRENT_STREAMS = n now (fault `lower-streams`). Streams already open
    /// stay open and are answered; nghttp2 refuses new ones above the limit once the client has acknowledged it.
    case lowerStreamLimit(Int)
    /// Submit this stream's answer (unless delayed), then send GOAWAY with this last-stream-id (the highest stream
    /// answered so far on the connection, this one included), this error code (0 = NO_ERROR) and these debug-data bytes (`{"reason":"Shutdown"}`). Then keep
    /// answering streams at or below the last-stream-id (a delayed answer included), reset open streams above it
    /// with RST_STREAM REFUSED_STREAM, accept no new ones, and close the connection (TLS close_notify, then the
    /// socket) once every stream at or below it is answered and the output is flushed.
    case goaway(lastStreamID: Int32, errorCode: UInt32, debugData: [UInt8])
    /// Close the socket at once: no answer on this stream, no GOAWAY, no TLS close_notify, drop queued output.
    case dropConnection
    /// Hold this stream's answer back for this many milliseconds (with a timer; keep serving other streams),
    /// then submit it. The actions after this one do not wait.
    case delay(milliseconds: Int)
    /// Reset this stream with RST_STREAM REFUSED_STREAM and send no answer (a request that arrived on a stream
    /// above the last-stream-id of a GOAWAY already sent: the client may resend it safely).
    case refuseStream
}
