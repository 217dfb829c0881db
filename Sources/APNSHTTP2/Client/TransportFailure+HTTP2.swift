import APNSCore

/// The transport failures an HTTP/2 client session reports for streams that ended without a complete response,
/// beyond `refusedStream` and `unprocessedAfterGoaway`: their texts end up in result lines' `detail`.
extension TransportFailure {
    /// The request's HEADERS never left this session (the connection ended first), or the connection ended before
    /// the server's first SETTINGS frame (its HTTP/2 preface, which precedes anything it sends): not processed.
    public static let connectionEndedBeforeSending = TransportFailure.notSent("the connection ended before the request was sent")
    /// The request went out and the connection ended before its answer: in doubt.
    public static let connectionEndedBeforeAnswer = TransportFailure.answerLost("the connection ended before the answer")

    /// The stream was reset with a code other than REFUSED_STREAM, by the server or by nghttp2 (a malformed
    /// response): in doubt.
    public static func streamReset(_ code: HTTP2ErrorCode) -> TransportFailure {
        .answerLost("stream reset (\(code))")
    }
}
