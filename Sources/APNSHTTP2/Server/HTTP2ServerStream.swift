/// One server stream's state while it is open: the request being received and the response being sent.
struct HTTP2ServerStream {
    enum Phase: UInt8 {
        /// The slot is unused.
        case free
        /// Request header fields or body still arriving.
        case receiving
        /// The request is complete and was reported.
        case received
        /// A response was submitted; its last frame has not gone out yet.
        case responding
        /// The response's END_STREAM went out.
        case responded
    }

    var phase = Phase.free
    var streamID: Int32 = 0
    var fields = HTTP2HeaderFieldList()
    var body: [UInt8] = []
    var bodyByteCount = 0
    var hasResponse = false
    /// The response body, kept alive (not copied) until the stream ends.
    var responseBody = HTTP2OutgoingBody()
}

extension HTTP2ServerStream: HTTP2SlotStream {
    /// Keeps the buffers' capacity for the next request.
    mutating func clear() {
        phase = .free
        streamID = 0
        fields.removeAll()
        body.removeAllKeepingStorage()
        bodyByteCount = 0
        hasResponse = false
        responseBody = HTTP2OutgoingBody()
    }
}
