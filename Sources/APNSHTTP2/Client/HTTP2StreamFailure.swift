import APNSCore

/// Why a client stream ended without a complete response, split by whether the server may have processed it.
public enum HTTP2StreamFailure: Hashable, Sendable, CustomStringConvertible {
    /// The server reset the stream with REFUSED_STREAM (for example over its stream limit): not processed.
    case refused
    /// The stream was above the last-stream-id of a GOAWAY from the server: not processed.
    case unprocessedAfterGoaway
    /// The request's HEADERS never left this session (the connection ended first), or the connection ended before
    /// the server's first SETTINGS frame (its HTTP/2 preface, which precedes anything it sends): not processed.
    case notSent
    /// The stream was reset with another code, by the server or by nghttp2 (a malformed response): in doubt.
    case reset(HTTP2ErrorCode)
    /// The request went out and the connection ended before its answer: in doubt.
    case connectionClosed

    /// Whether the request certainly did not reach the server's application, so sending it again cannot
    /// duplicate it.
    public var isSafeToResend: Bool {
        switch self {
        case .refused, .unprocessedAfterGoaway, .notSent: return true
        case .reset, .connectionClosed: return false
        }
    }

    /// The same fact in the dispatcher's terms.
    public var transportFailure: TransportFailure {
        switch self {
        case .refused: return .refusedStream
        case .unprocessedAfterGoaway: return .unprocessedAfterGoaway
        case .notSent: return .notSent("the connection ended before the request was sent")
        case .reset(let code): return .answerLost("stream reset (\(code))")
        case .connectionClosed: return .answerLost("the connection ended before the answer")
        }
    }

    public var description: String {
        switch self {
        case .refused: return "refused by the server (REFUSED_STREAM)"
        case .unprocessedAfterGoaway: return "above the GOAWAY last-stream-id (not processed)"
        case .notSent: return "not sent"
        case .reset(let code): return "reset (\(code))"
        case .connectionClosed: return "connection closed before the answer"
        }
    }
}
