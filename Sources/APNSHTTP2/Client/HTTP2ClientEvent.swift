import APNSCore

/// Something that happened on a client session, delivered by `HTTP2ClientSession.drainEvents` after nghttp2 has
/// returned. Every tag passed to `submitRequest` comes back in exactly one `.response` or `.streamFailed`.
/// Byte fields are slices of the session's event buffer: free to read or copy inside the handler, not meant to be
/// kept (keeping one makes the session allocate a new buffer).
public enum HTTP2ClientEvent: Sendable {
    /// A complete response (END_STREAM received).
    case response(HTTP2Response)
    /// A stream ended without a complete response.
    case streamFailed(tag: UInt64, streamID: Int32, failure: TransportFailure)
    /// The server sent GOAWAY: no new streams on this connection. Streams above its last-stream-id follow as
    /// `.streamFailed(…, .unprocessedAfterGoaway)`; the in-doubt ones may still be answered, else they end as
    /// `.streamFailed(…, .connectionEndedBeforeAnswer)` when the connection does.
    case goawayReceived(HTTP2Goaway)
    /// The server's first SETTINGS frame arrived, or a later one changed the number of streams that may be open
    /// at once (already capped by our `maximumConcurrentStreams`); `availableStreamSlots` follows it.
    case remoteSettingsChanged(maxConcurrentStreams: Int)
    /// The server acknowledged one of our PINGs.
    case pingAcknowledged(payload: UInt64)
    /// The connection failed: nghttp2 rejected the input, or found a protocol violation and sent GOAWAY with an
    /// error code. The session is closed; the streams it had follow as `.streamFailed`.
    case connectionError(HTTP2Error)
}

/// One complete response, matched to its request by `tag`.
public struct HTTP2Response: Sendable {
    /// The tag given to `submitRequest`.
    public let tag: UInt64
    public let streamID: Int32
    /// `:status`
    public let status: Int
    /// The `apns-id` header's bytes, if present.
    public let apnsID: ArraySlice<UInt8>?
    /// The `apns-unique-id` header's bytes (development environment), if present.
    public let apnsUniqueID: ArraySlice<UInt8>?
    /// The body (at most `maximumResponseBodyBytes`).
    public let body: ArraySlice<UInt8>

    public init(
        tag: UInt64, streamID: Int32, status: Int, apnsID: ArraySlice<UInt8>?, apnsUniqueID: ArraySlice<UInt8>?,
        body: ArraySlice<UInt8>
    ) {
        self.tag = tag
        self.streamID = streamID
        self.status = status
        self.apnsID = apnsID
        self.apnsUniqueID = apnsUniqueID
        self.body = body
    }

    /// The answer in the dispatcher's terms, with the body's reason and timestamp parsed (allocates).
    public var answer: PushAnswer {
        // Ids that are no UUID (a broken or hostile server's text) are dropped, never carried to a result file.
        let apnsID = apnsID.flatMap { APNSID.isUUID($0) ? String(decoding: $0, as: UTF8.self) : nil }
        let apnsUniqueID = apnsUniqueID.flatMap { APNSID.isUUID($0) ? String(decoding: $0, as: UTF8.self) : nil }
        // A 200 has no body: skip the body parser, a generic call across modules that runs unspecialised.
        guard !body.isEmpty else { return PushAnswer(status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID) }
        return PushAnswer(status: status, apnsID: apnsID, apnsUniqueID: apnsUniqueID, body: body)
    }
}

/// A GOAWAY from the server, with what it means for the streams open at that moment.
public struct HTTP2Goaway: Sendable {
    /// The highest stream id the server may have processed.
    public let lastStreamID: Int32
    public let errorCode: HTTP2ErrorCode
    /// The debug data (APNs sends `{"reason":"Shutdown"}`-style JSON here).
    public let debugData: ArraySlice<UInt8>
    /// Open streams above `lastStreamID`: not processed, safe to send again.
    public let unprocessedTags: [UInt64]
    /// Open streams at or below `lastStreamID` without a complete answer yet: in doubt unless answered later.
    public let inDoubtTags: [UInt64]

    public init(
        lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: ArraySlice<UInt8>, unprocessedTags: [UInt64],
        inDoubtTags: [UInt64]
    ) {
        self.lastStreamID = lastStreamID
        self.errorCode = errorCode
        self.debugData = debugData
        self.unprocessedTags = unprocessedTags
        self.inDoubtTags = inDoubtTags
    }

    /// The APNs reason in the debug data (`{"reason":"Shutdown"}`), if it holds one.
    public var reason: APNSReason? {
        APNSErrorBody(parsing: debugData).reason
    }
}

/// A client event as recorded inside callbacks: byte fields are spans of the session's event buffer, turned into
/// slices only when the event is delivered (so recording never makes that buffer shared and copied).
enum HTTP2ClientEventRecord {
    case response(tag: UInt64, streamID: Int32, status: Int, apnsID: HTTP2ByteSpan?, apnsUniqueID: HTTP2ByteSpan?, body: HTTP2ByteSpan)
    case streamFailed(tag: UInt64, streamID: Int32, failure: TransportFailure)
    case goaway(lastStreamID: Int32, errorCode: UInt32, debugData: HTTP2ByteSpan, unprocessed: [UInt64], inDoubt: [UInt64])
    case remoteSettingsChanged(Int)
    case pingAcknowledged(UInt64)
    case connectionError(HTTP2Error)
}

/// Where some bytes lie in an event buffer.
struct HTTP2ByteSpan: Hashable, Sendable {
    var start: Int
    var count: Int

    func slice(of bytes: [UInt8]) -> ArraySlice<UInt8> { bytes[start..<(start + count)] }
}
