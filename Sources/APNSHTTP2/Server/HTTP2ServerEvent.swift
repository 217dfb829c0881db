/// Something that happened on a server session, delivered by `HTTP2ServerSession.drainEvents` after nghttp2 has
/// returned.
public enum HTTP2ServerEvent: Sendable {
    /// A complete request (END_STREAM received). Answer it with `respond(to:…)` or `resetStream`.
    case request(HTTP2ServerRequest)
    /// A stream ended before its response was completely sent: the client reset it, a GOAWAY cut it off, or
    /// nghttp2 reset a malformed request. `respond` to it now throws `streamNotFound`.
    case streamClosed(streamID: Int32, errorCode: HTTP2ErrorCode)
    /// The client sent GOAWAY.
    case goawayReceived(lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8])
    /// The client acknowledged one of our SETTINGS frames (in order): the stream limit it carried is in force.
    case settingsAcknowledged
    /// The client acknowledged one of our PINGs.
    case pingAcknowledged(payload: UInt64)
    /// The connection failed: nghttp2 rejected the input (for example bytes that are not an HTTP/2 client
    /// preface), or found a protocol violation and sent GOAWAY. The session is closed.
    case connectionError(HTTP2Error)
}
