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

    public var description: String {
        switch self {
        case .refusedStream: return "stream refused by the server"
        case .unprocessedAfterGoaway: return "not processed before GOAWAY"
        case .notSent(let why): return "not sent: \(why)"
        case .answerLost(let why): return "answer lost: \(why)"
        }
    }
}
