/// What `Nghttp2Session`'s C callbacks tell the session object that owns it (`HTTP2ClientSession` or
/// `HTTP2ServerSession`), in Swift terms only. Every method runs inside an nghttp2 callback: it may record what
/// happened into its own arrays and nothing else. It must never call back into nghttp2 (no submit, no send, no
/// receive): the owner acts on what was recorded after `nghttp2_session_mem_recv`/`mem_send` returns.
protocol Nghttp2EventSink: AnyObject {
    /// A HEADERS frame starts on `streamID`; `slot` is the stream's slot (nil for a stream the peer opened and
    /// nobody claimed yet). Returns the slot to attach to the stream (a server claims its new streams here), or
    /// nil to leave it as it is.
    func nghttp2BeginHeaders(streamID: Int32, slot: Int?, isRequest: Bool) -> Int?
    /// One header field of the header block that `nghttp2BeginHeaders` announced.
    func nghttp2Header(streamID: Int32, slot: Int?, name: Nghttp2BorrowedBytes, value: Nghttp2BorrowedBytes)
    /// A chunk of DATA payload for `streamID`.
    func nghttp2DataChunk(streamID: Int32, slot: Int?, bytes: Nghttp2BorrowedBytes)
    /// A whole frame arrived (after its header fields or data chunks).
    func nghttp2FrameReceived(_ frame: Nghttp2FrameSummary, slot: Int?)
    /// A frame was serialized into the output.
    func nghttp2FrameSent(_ frame: Nghttp2FrameSummary, slot: Int?)
    /// A stream closed, for whatever reason; `errorCode` is NO_ERROR for a normal end.
    func nghttp2StreamClosed(streamID: Int32, slot: Int?, errorCode: UInt32)
    /// nghttp2 wants up to `window.count` bytes of the body of the stream in `slot`. Returns how many bytes it
    /// wrote into `window` and whether that was the end of the body, or nil when the body is gone (the stream is
    /// then reset with INTERNAL_ERROR).
    func nghttp2ReadBody(streamID: Int32, slot: Int, into window: Nghttp2OutputWindow) -> (count: Int, isLast: Bool)?
    /// nghttp2 found a protocol violation and has just sent a GOAWAY with an error code to end the connection.
    func nghttp2ConnectionFailed(_ error: HTTP2Error)
}

/// A frame nghttp2 received or sent, reduced to what the sessions act on. `debugData` of a GOAWAY is borrowed:
/// valid only inside the callback.
enum Nghttp2FrameSummary {
    case data(streamID: Int32, endStream: Bool)
    case headers(streamID: Int32, endStream: Bool, isRequest: Bool)
    case resetStream(streamID: Int32, errorCode: UInt32)
    /// A SETTINGS frame; `maxConcurrentStreams` is its last SETTINGS_MAX_CONCURRENT_STREAMS entry, if any.
    case settings(isAck: Bool, maxConcurrentStreams: UInt32?)
    case ping(isAck: Bool, payload: UInt64)
    case goaway(lastStreamID: Int32, errorCode: UInt32, debugData: Nghttp2BorrowedBytes)
    case other(type: UInt8, streamID: Int32)
}
