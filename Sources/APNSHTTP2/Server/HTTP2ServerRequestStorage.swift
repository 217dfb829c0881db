/// Storage for requests' field lists and bodies, handed back by their owners (`recycle`) and lent to the next
/// requests (`takeRequest`), so a busy server connection stops allocating per request.
struct HTTP2ServerRequestStorage {
    private var spareFields: [HTTP2HeaderFieldList] = []
    private var spareBodies: [[UInt8]] = []

    /// The request received on `stream`, its field list and body moved out, not copied: the stream gets spare
    /// storage in their place (emptied when its slot is released), and `recycle` takes the request's storage back
    /// once its owner is done with it.
    /// Where nobody recycles, the slot's storage grows anew for its next request, as a copy would have cost.
    mutating func takeRequest(from stream: inout HTTP2ServerStream) -> HTTP2ServerRequest {
        var fields = spareFields.popLast() ?? HTTP2HeaderFieldList()
        var body = spareBodies.popLast() ?? []
        swap(&fields, &stream.fields)
        swap(&body, &stream.body)
        return HTTP2ServerRequest(
            streamID: stream.streamID, fields: fields, body: body, bodyByteCount: stream.bodyByteCount)
    }

    /// Keeps a finished request's storage for a later `takeRequest`, up to `limit` of each: as many as the client
    /// may have requests out at once, the session's stream limit. (A fixed 64 left a client with 100 streams open
    /// a third of each batch to grow fresh storage, field by field.)
    mutating func recycle(_ request: HTTP2ServerRequest, keepingAtMost limit: Int) {
        if spareFields.count < limit { spareFields.append(request.fields) }
        if spareBodies.count < limit { spareBodies.append(request.body) }
    }

    /// Field lists kept for later requests.
    var spareFieldListCount: Int { spareFields.count }
}
