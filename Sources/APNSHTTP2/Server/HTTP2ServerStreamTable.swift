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
    var responseBody: [UInt8] = []
    var responseOffset = 0
}

/// The server's open streams in reusable slots, addressed by slot number (nghttp2 keeps each stream's slot as its
/// stream user data).
struct HTTP2ServerStreamTable {
    private(set) var streams: [HTTP2ServerStream] = []
    private var freeSlots: [Int] = []
    private var spareFields: [HTTP2HeaderFieldList] = []
    private var spareBodies: [[UInt8]] = []
    /// Slots in use.
    private(set) var count = 0

    /// Takes a free slot for a new request on `streamID` and returns its number.
    mutating func claim(streamID: Int32) -> Int {
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
        } else {
            slot = streams.count
            streams.append(HTTP2ServerStream())
        }
        streams[slot].phase = .receiving
        streams[slot].streamID = streamID
        count += 1
        return slot
    }

    /// Returns a slot to the free list, keeping its buffers' capacity for the next request.
    mutating func release(_ slot: Int) {
        guard isInUse(slot) else { return }
        streams[slot].phase = .free
        streams[slot].streamID = 0
        streams[slot].fields.removeAll()
        streams[slot].body.removeAllKeepingStorage()
        streams[slot].bodyByteCount = 0
        streams[slot].hasResponse = false
        streams[slot].responseBody = []
        streams[slot].responseOffset = 0
        freeSlots.append(slot)
        count -= 1
    }

    /// The request received on `slot`, its field list and body moved out, not copied: the slot gets spare storage in
    /// their place (emptied when the slot is released), and `recycle` takes the request's storage back once its
    /// owner is done with it.
    /// Where nobody recycles, the slot's storage grows anew for its next request, as a copy would have cost.
    mutating func takeRequest(_ slot: Int) -> HTTP2ServerRequest {
        var fields = spareFields.popLast() ?? HTTP2HeaderFieldList()
        var body = spareBodies.popLast() ?? []
        swap(&fields, &streams[slot].fields)
        swap(&body, &streams[slot].body)
        return HTTP2ServerRequest(
            streamID: streams[slot].streamID, fields: fields, body: body, bodyByteCount: streams[slot].bodyByteCount)
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

    func isInUse(_ slot: Int) -> Bool {
        streams.indices.contains(slot) && streams[slot].phase != .free
    }

    subscript(slot: Int) -> HTTP2ServerStream {
        _read { yield streams[slot] }
        _modify { yield &streams[slot] }
    }

    /// The slots in use.
    var slotsInUse: [Int] {
        streams.indices.filter { streams[$0].phase != .free }
    }
}
