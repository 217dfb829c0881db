/// One client stream's state while it is open: the caller's tag, the request body being sent, what the response
/// has brought so far, and the facts that decide how a failure is classified.
struct HTTP2ClientStream {
    enum Phase: UInt8 {
        /// The slot is unused.
        case free
        /// Submitted; its HEADERS frame has not been serialized yet.
        case queued
        /// Its HEADERS frame went into the output; its body (DATA) has not all gone yet, so it has no END_STREAM and
        /// the server cannot have processed it (a server that never opens its flow-control window keeps it here).
        case sent
        /// Its END_STREAM went into the output (on HEADERS for a request without a body, else on its last DATA):
        /// the server may process it from now on.
        case complete
        /// Its complete response was reported.
        case answered
    }

    var phase = Phase.free
    var tag: UInt64 = 0
    var streamID: Int32 = 0
    /// Above the last-stream-id of a GOAWAY received.
    var unprocessedByGoaway = false
    /// The code of an RST_STREAM the server sent for this stream.
    var peerResetCode: UInt32?
    /// The owner gave up on it (`cancelRequest`) and has reported it already: nothing more is recorded for it.
    var cancelled = false
    /// The request body, kept alive (not copied) until the stream ends.
    var body: [UInt8] = []
    var bodyOffset = 0
    /// The shared header block the HEADERS frame points into (NO_COPY), kept alive until the stream ends.
    var block: HTTP2HeaderBlock?
    var status = 0
    var hasAPNSID = false
    var apnsID: [UInt8] = []
    var hasAPNSUniqueID = false
    var apnsUniqueID: [UInt8] = []
    var responseBody: [UInt8] = []

    /// Whether the whole request (its END_STREAM) went into the output: only then may the server have processed it.
    var isComplete: Bool { phase == .complete || phase == .answered }
}

/// The client's open streams in reusable slots, addressed by slot number (nghttp2 keeps each stream's slot as its
/// stream user data, so no lookup table is needed). Slots and their byte buffers are reused: once the table has
/// grown to the connection's concurrency, opening a stream allocates nothing here.
struct HTTP2ClientStreamTable {
    private(set) var streams: [HTTP2ClientStream] = []
    private var freeSlots: [Int] = []
    /// Slots in use.
    private(set) var count = 0

    init(reservingCapacity capacity: Int) {
        streams.reserveCapacity(capacity)
        freeSlots.reserveCapacity(capacity)
    }

    /// Takes a free slot (growing the table when none is free) and returns its number.
    mutating func claim(tag: UInt64) -> Int {
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
        } else {
            slot = streams.count
            streams.append(HTTP2ClientStream())
        }
        streams[slot].phase = .queued
        streams[slot].tag = tag
        count += 1
        return slot
    }

    /// Returns a slot to the free list, dropping its body and block references and keeping its buffers' capacity.
    mutating func release(_ slot: Int) {
        guard streams.indices.contains(slot), streams[slot].phase != .free else { return }
        streams[slot].phase = .free
        streams[slot].tag = 0
        streams[slot].streamID = 0
        streams[slot].unprocessedByGoaway = false
        streams[slot].peerResetCode = nil
        streams[slot].cancelled = false
        streams[slot].body = []
        streams[slot].bodyOffset = 0
        streams[slot].block = nil
        streams[slot].status = 0
        streams[slot].hasAPNSID = false
        streams[slot].apnsID.removeAllKeepingStorage()
        streams[slot].hasAPNSUniqueID = false
        streams[slot].apnsUniqueID.removeAllKeepingStorage()
        streams[slot].responseBody.removeAllKeepingStorage()
        freeSlots.append(slot)
        count -= 1
    }

    /// The slot in use by `streamID`, if any (a scan, for streams nghttp2 does not hold yet: rare events only).
    func slot(ofStreamID streamID: Int32) -> Int? {
        streams.indices.first { streams[$0].phase != .free && streams[$0].streamID == streamID }
    }

    /// Whether `slot` names a stream in use.
    func isInUse(_ slot: Int) -> Bool {
        streams.indices.contains(slot) && streams[slot].phase != .free
    }

    subscript(slot: Int) -> HTTP2ClientStream {
        _read { yield streams[slot] }
        _modify { yield &streams[slot] }
    }

    /// The slots in use, in slot order.
    var slotsInUse: [Int] {
        streams.indices.filter { streams[$0].phase != .free }
    }
}
