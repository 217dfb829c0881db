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
    var body = HTTP2OutgoingBody()
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

extension HTTP2ClientStream: HTTP2SlotStream {
    /// Drops the body and block references and keeps the buffers' capacity.
    mutating func clear() {
        phase = .free
        tag = 0
        streamID = 0
        unprocessedByGoaway = false
        peerResetCode = nil
        cancelled = false
        body = HTTP2OutgoingBody()
        block = nil
        status = 0
        hasAPNSID = false
        apnsID.removeAllKeepingStorage()
        hasAPNSUniqueID = false
        apnsUniqueID.removeAllKeepingStorage()
        responseBody.removeAllKeepingStorage()
    }
}

/// The client's open streams, in reusable slots.
typealias HTTP2ClientStreamTable = HTTP2StreamSlotTable<HTTP2ClientStream>

extension HTTP2StreamSlotTable where Stream == HTTP2ClientStream {
    /// Takes a free slot for a request tagged `tag` (queued) and returns its number.
    mutating func claim(tag: UInt64) -> Int {
        let slot = claim()
        self[slot].phase = .queued
        self[slot].tag = tag
        return slot
    }

    /// The slot in use by `streamID`, if any (a scan, for streams nghttp2 does not hold yet: rare events only).
    func slot(ofStreamID streamID: Int32) -> Int? {
        slotsInUse.first { self[$0].streamID == streamID }
    }
}
