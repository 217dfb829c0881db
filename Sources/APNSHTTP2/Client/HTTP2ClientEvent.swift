import APNSCore

/// Something that happened on a client session, delivered by `HTTP2ClientSession.drainEvents` after nghttp2 has
/// returned. Every tag passed to `submitRequest` comes back in exactly one `.response` or `.streamFailed`.
/// Byte fields are slices of the session's event buffer: free to read or copy inside the handler, not meant to be
/// kept (keeping one makes the session allocate a new buffer).
public typealias HTTP2ClientEvent = HTTP2ClientEventOf<ArraySlice<UInt8>>
/// One complete response, matched to its request by `tag`.
public typealias HTTP2Response = HTTP2ResponseOf<ArraySlice<UInt8>>
/// A GOAWAY from the server, with what it means for the streams open at that moment.
public typealias HTTP2Goaway = HTTP2GoawayOf<ArraySlice<UInt8>>
/// A client event as recorded inside callbacks: byte fields are spans of the session's event buffer, turned into
/// slices only when the event is delivered (so recording never makes that buffer shared and copied).
typealias HTTP2ClientEventRecord = HTTP2ClientEventOf<HTTP2ByteSpan>

/// A client session's event (`HTTP2ClientEvent`), its byte fields held as `Bytes`.
public enum HTTP2ClientEventOf<Bytes: Sendable>: Sendable {
    /// A complete response (END_STREAM received).
    case response(HTTP2ResponseOf<Bytes>)
    /// A stream ended without a complete response.
    case streamFailed(tag: UInt64, streamID: Int32, failure: TransportFailure)
    /// The server sent GOAWAY: no new streams on this connection. Streams above its last-stream-id follow as
    /// `.streamFailed(…, .unprocessedAfterGoaway)`; the in-doubt ones may still be answered, else they end as
    /// `.streamFailed(…, .connectionEndedBeforeAnswer)` when the connection does.
    case goawayReceived(HTTP2GoawayOf<Bytes>)
    /// The server's first SETTINGS frame arrived, or a later one changed the number of streams that may be open
    /// at once (already capped by our `maximumConcurrentStreams`); `availableStreamSlots` follows it.
    case remoteSettingsChanged(maxConcurrentStreams: Int)
    /// The server acknowledged one of our PINGs.
    case pingAcknowledged(payload: UInt64)
    /// The connection failed: nghttp2 rejected the input, or found a protocol violation and sent GOAWAY with an
    /// error code. The session is closed; the streams it had follow as `.streamFailed`.
    case connectionError(HTTP2Error)
}

/// One complete response (`HTTP2Response`), its byte fields held as `Bytes`. Made by the client session only.
public struct HTTP2ResponseOf<Bytes: Sendable>: Sendable {
    /// The tag given to `submitRequest`.
    public let tag: UInt64
    /// The stream the event is about.
    public let streamID: Int32
    /// `:status`
    public let status: Int
    /// The `apns-id` header's bytes, if present.
    public let apnsID: Bytes?
    /// The `apns-unique-id` header's bytes (development environment), if present.
    public let apnsUniqueID: Bytes?
    /// The body (at most `maximumResponseBodyBytes`).
    public let body: Bytes
}

extension HTTP2ResponseOf<ArraySlice<UInt8>> {
    /// The answer in the dispatcher's terms, with the body's reason and timestamp parsed (allocates).
    public var answer: PushAnswer {
        // Ids that are no UUID (a broken or hostile server's text) are dropped, never carried to a result file.
        let apnsID = apnsID.flatMap { APNSID.isUUID($0) ? String(decoding: $0, as: UTF8.self) : nil }
        let apnsUniqueID = apnsUniqueID.flatMap { APNSID.isUUID($0) ? String(decoding: $0, as: UTF8.self) : nil }
        // APNs sends a body with errors only (docs/APNS.md, "Response"): a 200's body, if a server sends one
        // anyway, carries nothing the sender acts on and is not parsed (a generic call across modules that runs
        // unspecialised: ~3,000 instructions an answer against a server that serves `{}` with its 200s).
        guard status != 200, !body.isEmpty else {
            return PushAnswer(status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID)
        }
        return PushAnswer(status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID, body: body)
    }
}

/// A GOAWAY from the server (`HTTP2Goaway`), its debug data held as `Bytes`. Made by the client session only.
public struct HTTP2GoawayOf<Bytes: Sendable>: Sendable {
    /// The highest stream id the server may have processed.
    public let lastStreamID: Int32
    /// The error code the peer sent.
    public let errorCode: HTTP2ErrorCode
    /// The debug data (APNs sends `{"reason":"Shutdown"}`-style JSON here).
    public let debugData: Bytes
    /// Open streams above `lastStreamID`: not processed, safe to send again.
    public let unprocessedTags: [UInt64]
    /// Open streams at or below `lastStreamID` without a complete answer yet: in doubt unless answered later.
    public let inDoubtTags: [UInt64]
}

extension HTTP2GoawayOf<ArraySlice<UInt8>> {
    /// The APNs reason in the debug data (`{"reason":"Shutdown"}`), if it holds one.
    public var reason: APNSReason? {
        APNSErrorBody(parsing: debugData).reason
    }
}

extension HTTP2ClientEventOf where Bytes == HTTP2ByteSpan {
    /// The same event with each recorded span turned into the slice of `bytes` it names. Written for these two
    /// types, not as a generic map: the generic form copies and destroys the events through calls, per answer.
    func sliced(of bytes: [UInt8]) -> HTTP2ClientEvent {
        let transform = { (span: HTTP2ByteSpan) in span.slice(of: bytes) }
        switch self {
        case .response(let response):
            return .response(
                HTTP2ResponseOf(
                    tag: response.tag, streamID: response.streamID, status: response.status,
                    apnsID: response.apnsID.map(transform), apnsUniqueID: response.apnsUniqueID.map(transform),
                    body: transform(response.body)))
        case .streamFailed(let tag, let streamID, let failure):
            return .streamFailed(tag: tag, streamID: streamID, failure: failure)
        case .goawayReceived(let goaway):
            return .goawayReceived(
                HTTP2GoawayOf(
                    lastStreamID: goaway.lastStreamID, errorCode: goaway.errorCode,
                    debugData: transform(goaway.debugData),
                    unprocessedTags: goaway.unprocessedTags, inDoubtTags: goaway.inDoubtTags))
        case .remoteSettingsChanged(let limit):
            return .remoteSettingsChanged(maxConcurrentStreams: limit)
        case .pingAcknowledged(let payload):
            return .pingAcknowledged(payload: payload)
        case .connectionError(let error):
            return .connectionError(error)
        }
    }
}

/// Where some bytes lie in an event buffer.
struct HTTP2ByteSpan: Hashable, Sendable {
    var start: Int
    var count: Int

    func slice(of bytes: [UInt8]) -> ArraySlice<UInt8> { bytes[start..<(start + count)] }
}
