import APNSCore

/// The client side of one HTTP/2 connection to APNs, in memory: bytes in (`receive`), bytes out
/// (`produceOutput`), requests in (`submitRequest`), events out (`drainEvents`). It owns the nghttp2 session, the
/// stream slots and the event buffer; it does no I/O and is used from one thread.
///
/// A turn of the owner's loop: `receive` what the socket delivered, `drainEvents`, submit new requests while
/// `availableStreamSlots > 0`, then `produceOutput` and write it. Every submitted tag comes back exactly once, as
/// a response or a classified failure, whatever happens to the connection.
///
/// Stream limit: `availableStreamSlots` follows the server's SETTINGS_MAX_CONCURRENT_STREAMS, capped by
/// `maximumConcurrentStreams`, and assumes `assumedPeerMaxConcurrentStreams` (1) until the server's first SETTINGS
/// frame: see `HTTP2StreamSlots`.
public final class HTTP2ClientSession: HTTP2Session {
    /// The settings the session was created with.
    public let configuration: HTTP2ClientConfiguration
    @exclusivity(unchecked)
    var slots: HTTP2StreamSlots
    @exclusivity(unchecked)
    var streams: HTTP2ClientStreamTable
    /// Events recorded and not yet delivered, and the bytes they refer to.
    @exclusivity(unchecked)
    var records: [HTTP2ClientEventRecord] = []
    @exclusivity(unchecked)
    var eventBytes: [UInt8] = []
    /// Streams whose answer passed `maximumResponseBodyBytes`: answered with what arrived, reset once nghttp2 returns.
    @exclusivity(unchecked)
    var oversizedAnswers: [Int32] = []
    /// The batch `drainEvents` is delivering (swapped with the two above).
    @exclusivity(unchecked)
    private var deliveringRecords: [HTTP2ClientEventRecord] = []
    @exclusivity(unchecked)
    private var deliveringBytes: [UInt8] = []
    @exclusivity(unchecked)
    private var isDraining = false

    /// A client session with `configuration`; throws when nghttp2 cannot create it.
    public init(configuration: HTTP2ClientConfiguration = HTTP2ClientConfiguration()) throws(HTTP2Error) {
        try configuration.validate()
        self.configuration = configuration
        self.slots = HTTP2StreamSlots(
            localLimit: configuration.maximumConcurrentStreams,
            assumedPeerLimit: configuration.assumedPeerMaxConcurrentStreams)
        self.streams = HTTP2ClientStreamTable(reservingCapacity: min(configuration.maximumConcurrentStreams, 1024))
        try super.init(
            Nghttp2Session.Start(
                role: .client,
                enablePush: false,
                maxConcurrentStreams: nil,
                initialWindowSize: UInt32(configuration.receiveWindows.stream),
                connectionWindowSize: Int32(configuration.receiveWindows.connection),
                assumedPeerMaxConcurrentStreams: UInt32(clamping: configuration.assumedPeerMaxConcurrentStreams)))
        records.reserveCapacity(256)
        eventBytes.reserveCapacity(16 << 10)
        deliveringRecords.reserveCapacity(256)
        deliveringBytes.reserveCapacity(16 << 10)
        nghttp2.attach(self)
        nghttp2.headerNameLengths = 1 << 7 | 1 << 14  // `:status`, `apns-id`; `apns-unique-id`: all it reads
    }

    /// How many requests may start now.
    public var availableStreamSlots: Int { acceptsNewStreams ? slots.available : 0 }
    /// Whether this connection can ever start another stream: false after a GOAWAY (sent or received), once
    /// closed, and once the next stream id would pass `configuration.lastStreamID` (by default well before the
    /// client's ids run out at 2^31-1): time for a new connection.
    public var acceptsNewStreams: Bool {
        !isClosed && slots.isAcceptingStreams && nghttp2.isRequestAllowed
            && Int64(nghttp2.nextStreamID) <= Int64(configuration.lastStreamID)
    }
    /// Streams submitted and not yet reported.
    public var openStreamCount: Int { slots.open }
    /// The stream accounting (limit, peer limit, whether the server's SETTINGS arrived).
    public var streamSlots: HTTP2StreamSlots { slots }
    /// Whether events wait for `drainEvents`.
    public var hasEvents: Bool { !records.isEmpty }

    /// Starts a request: `block`'s fields (shared, not copied; kept alive until the stream ends), then `fields`
    /// (copied now), and `body` (kept, not copied, until the stream ends; empty sends no DATA). Returns the stream
    /// id. Throws `noStreamSlot` when `availableStreamSlots` is 0, `sessionClosing` after a GOAWAY or the end of
    /// the connection, or nghttp2's error.
    @discardableResult
    public func submitRequest(
        block: HTTP2HeaderBlock?, fields: HTTP2HeaderFieldList, body: [UInt8], tag: UInt64
    ) throws(HTTP2Error) -> Int32 {
        guard acceptsNewStreams else { throw .sessionClosing }
        guard slots.available > 0 else { throw .noStreamSlot }
        let slot = streams.claim(tag: tag)
        streams[slot].body = HTTP2OutgoingBody(bytes: body)
        streams[slot].block = block
        let streamID = nghttp2.submitRequest(block: block?.storage, fields: fields, slot: slot, hasBody: !body.isEmpty)
        guard streamID > 0 else {
            streams.release(slot)
            throw Nghttp2Session.error(streamID)
        }
        streams[slot].streamID = streamID
        slots.streamOpened()
        return streamID
    }

    /// Gives up on the request on `streamID`: queues RST_STREAM CANCEL, and nothing more is reported for its tag
    /// (the caller reports it). Returns whether its HEADERS went out (the server may have it), or nil when the
    /// stream is not open or already answered.
    public func cancelRequest(streamID: Int32) -> Bool? {
        let known = nghttp2.slot(of: streamID).flatMap {
            streams.isInUse($0) && streams[$0].streamID == streamID ? $0 : nil
        }
        guard !isClosed, let slot = known ?? streams.slot(ofStreamID: streamID), streams[slot].phase != .answered,
            !streams[slot].cancelled
        else { return nil }
        streams[slot].cancelled = true
        let wasSent = streams[slot].phase == .complete && slots.hasReceivedPeerSettings
        if nghttp2.submitReset(streamID: streamID, errorCode: .cancel) != 0 {
            // nghttp2 no longer knows the stream: it will not report its close, so free the slot now.
            streams.release(slot)
            slots.streamClosed()
        }
        return wasSent
    }

    /// Ends the connection: queues GOAWAY and takes no new streams. Once `produceOutput` has drained the output
    /// the session is closed, and streams still open are reported (not sent, or in doubt).
    public func terminate(errorCode: HTTP2ErrorCode = .noError, debugData: [UInt8] = []) {
        guard !isClosed, !closesWhenOutputDrained else { return }
        slots.stopAccepting()
        closesWhenOutputDrained = true
        _ = nghttp2.submitGoaway(lastStreamID: 0, errorCode: errorCode, debugData: debugData)
    }

    /// Delivers the recorded events in order, then empties the event buffer. Events recorded while the handler
    /// runs (it may submit, produce output, close) are delivered in the same call, after the ones before them;
    /// they go to a second buffer, so recording never copies the bytes the handler is reading.
    public func drainEvents(_ handler: (HTTP2ClientEvent) -> Void) {
        guard !isDraining else { return }
        isDraining = true
        defer { isDraining = false }
        while !records.isEmpty {
            swap(&records, &deliveringRecords)
            swap(&eventBytes, &deliveringBytes)
            for record in deliveringRecords { handler(record.sliced(of: deliveringBytes)) }
            deliveringRecords.removeAll(keepingCapacity: true)
            deliveringBytes.removeAll(keepingCapacity: true)
        }
    }

    /// The recorded events as an array (allocates; for tests and tools).
    public func takeEvents() -> [HTTP2ClientEvent] {
        var events: [HTTP2ClientEvent] = []
        drainEvents { events.append($0) }
        return events
    }

    /// Resets the streams whose answers were cut short, once nghttp2 has returned.
    override func inputProcessed() {
        for streamID in oversizedAnswers { _ = nghttp2.submitReset(streamID: streamID, errorCode: .cancel) }
        oversizedAnswers.removeAll(keepingCapacity: true)
    }

    override func recordConnectionError(_ error: HTTP2Error) {
        records.append(.connectionError(error))
    }

    /// No new streams; every open stream is reported, as not sent or in doubt.
    override func sessionEnded() {
        slots.stopAccepting()
        for slot in streams.slotsInUse {
            let phase = streams[slot].phase
            if phase != .answered, !streams[slot].cancelled {
                // Before the server's SETTINGS (its preface) it cannot have processed anything.
                let unprocessed = !streams[slot].isComplete || !slots.hasReceivedPeerSettings
                let failure: TransportFailure =
                    streams[slot].unprocessedByGoaway
                    ? .unprocessedAfterGoaway
                    : unprocessed ? .connectionEndedBeforeSending : .connectionEndedBeforeAnswer
                records.append(
                    .streamFailed(tag: streams[slot].tag, streamID: streams[slot].streamID, failure: failure))
            }
            streams.release(slot)
            slots.streamClosed()
        }
    }
}

// MARK: - EventSink

/// What the client records from inside nghttp2's callbacks: response fields and bodies into the stream slots,
/// finished responses, failures, SETTINGS, PING and GOAWAY into `records`. Nothing here calls nghttp2.
extension HTTP2ClientSession: Nghttp2EventSink {
    func nghttp2BeginHeaders(streamID: Int32, slot: Int?, isRequest: Bool) -> Int? {
        nil  // A client only sees response header blocks, on streams it opened (push is disabled).
    }

    func nghttp2Header(streamID: Int32, slot: Int?, name: Nghttp2BorrowedBytes, value: Nghttp2BorrowedBytes) {
        guard let slot, streams.isInUse(slot), streams[slot].streamID == streamID else { return }
        switch name.count {
        case 7:
            if name.equals(":status") {
                streams[slot].status = value.decimalValue ?? 0
            } else if name.equals("apns-id") {
                streams[slot].hasAPNSID = true
                streams[slot].apnsID.removeAll(keepingCapacity: true)
                value.append(to: &streams[slot].apnsID)
            }
        case 14:
            if name.equals("apns-unique-id") {
                streams[slot].hasAPNSUniqueID = true
                streams[slot].apnsUniqueID.removeAll(keepingCapacity: true)
                value.append(to: &streams[slot].apnsUniqueID)
            }
        default:
            break
        }
    }

    func nghttp2DataChunk(streamID: Int32, slot: Int?, bytes: Nghttp2BorrowedBytes) {
        guard let slot, streams.isInUse(slot), streams[slot].phase != .answered, !streams[slot].cancelled else {
            return
        }
        let room = configuration.maximumResponseBodyBytes - streams[slot].responseBody.count
        bytes.append(to: &streams[slot].responseBody, limit: room)
        if bytes.count > room {
            // Past the cap: the answer is what has arrived (APNs's bodies are tens of bytes); the stream is reset
            // once nghttp2 returns, so the rest of the body is never read.
            recordResponse(slot)
            oversizedAnswers.append(streams[slot].streamID)
        }
    }

    func nghttp2FrameReceived(_ frame: Nghttp2FrameSummary, slot: Int?) {
        switch frame {
        case .headers(_, let endStream, _), .data(_, let endStream):
            if endStream, let slot, streams.isInUse(slot), !streams[slot].cancelled { recordResponse(slot) }
        case .resetStream(_, let errorCode):
            if let slot, streams.isInUse(slot) { streams[slot].peerResetCode = errorCode }
        case .settings(let isAck, let maxConcurrentStreams):
            if !isAck, let limit = slots.peerSettingsReceived(maxConcurrentStreams: maxConcurrentStreams) {
                records.append(.remoteSettingsChanged(maxConcurrentStreams: limit))
            }
        case .ping(let isAck, let payload):
            if isAck { records.append(.pingAcknowledged(payload: payload)) }
        case .goaway(let lastStreamID, let errorCode, let debugData):
            recordGoaway(lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData)
        case .other:
            break
        }
    }

    func nghttp2FrameSent(_ frame: Nghttp2FrameSummary, slot: Int?) {
        switch frame {
        case .headers(_, let endStream, let isRequest):
            if isRequest, let slot, streams.isInUse(slot), streams[slot].phase == .queued {
                streams[slot].phase = endStream ? .complete : .sent
            }
        case .data(_, let endStream):
            if endStream, let slot, streams.isInUse(slot), streams[slot].phase == .sent {
                streams[slot].phase = .complete
            }
        case .goaway:
            slots.stopAccepting()
        default:
            break
        }
    }

    func nghttp2StreamClosed(streamID: Int32, slot: Int?, errorCode: UInt32) {
        guard let slot, streams.isInUse(slot) else { return }
        if streams[slot].phase != .answered, !streams[slot].cancelled {
            let failure = Self.failure(
                of: streams[slot], closedWith: errorCode, serverSpoke: slots.hasReceivedPeerSettings)
            records.append(.streamFailed(tag: streams[slot].tag, streamID: streams[slot].streamID, failure: failure))
        }
        streams.release(slot)
        slots.streamClosed()
    }

    func nghttp2ReadBody(streamID: Int32, slot: Int, into window: Nghttp2OutputWindow) -> (count: Int, isLast: Bool)? {
        guard streams.isInUse(slot) else { return nil }
        return streams[slot].body.fill(window)
    }

    func nghttp2ConnectionFailed(_ error: HTTP2Error) {
        recordConnectionError(error)
    }

    /// How a stream that ended without a complete response is classified. `serverSpoke`: whether the server's
    /// first SETTINGS frame (its connection preface, which must come before anything else it sends) arrived;
    /// before it the server cannot have processed any request.
    static func failure(of stream: HTTP2ClientStream, closedWith errorCode: UInt32, serverSpoke: Bool)
        -> TransportFailure
    {
        if stream.unprocessedByGoaway { return .unprocessedAfterGoaway }
        if !serverSpoke { return .connectionEndedBeforeSending }
        if let peerCode = stream.peerResetCode {
            if peerCode == HTTP2ErrorCode.refusedStream.rawValue { return .refusedStream }
            return stream.isComplete ? .streamReset(HTTP2ErrorCode(rawValue: peerCode)) : .connectionEndedBeforeSending
        }
        // nghttp2 closes a request it could not send (GOAWAY received, session ending) with REFUSED_STREAM; and a
        // request whose END_STREAM never left cannot have been processed (APNs answers whole requests).
        if !stream.isComplete { return .connectionEndedBeforeSending }
        return .streamReset(HTTP2ErrorCode(rawValue: errorCode))
    }

    /// The stream's response is complete: copy its fields to the event buffer and record it.
    private func recordResponse(_ slot: Int) {
        guard streams.isInUse(slot), streams[slot].phase != .answered else { return }
        streams[slot].phase = .answered
        let apnsID = streams[slot].hasAPNSID ? appendEventBytes(streams[slot].apnsID) : nil
        let uniqueID = streams[slot].hasAPNSUniqueID ? appendEventBytes(streams[slot].apnsUniqueID) : nil
        let body = appendEventBytes(streams[slot].responseBody)
        records.append(
            .response(
                HTTP2ResponseOf(
                    tag: streams[slot].tag, streamID: streams[slot].streamID, status: streams[slot].status,
                    apnsID: apnsID,
                    apnsUniqueID: uniqueID, body: body)))
    }

    private func appendEventBytes(_ bytes: [UInt8]) -> HTTP2ByteSpan {
        let start = eventBytes.count
        eventBytes.append(contentsOf: bytes)
        return HTTP2ByteSpan(start: start, count: bytes.count)
    }

    /// Classifies the open streams against the GOAWAY's last-stream-id and records the event. nghttp2 closes the
    /// streams above it right after this callback (and the queued ones when it next sends), so each of them then
    /// fails as `.unprocessedAfterGoaway`.
    private func recordGoaway(lastStreamID: Int32, errorCode: UInt32, debugData: Nghttp2BorrowedBytes) {
        slots.stopAccepting()
        var unprocessed: [UInt64] = []
        var inDoubt: [UInt64] = []
        for slot in streams.slotsInUse
        where !streams[slot].unprocessedByGoaway && !streams[slot].cancelled && streams[slot].phase != .answered {
            // A request not yet written never will be after a GOAWAY: nghttp2 drops it, unprocessed too.
            if streams[slot].streamID > lastStreamID || streams[slot].phase == .queued {
                streams[slot].unprocessedByGoaway = true
                unprocessed.append(streams[slot].tag)
            } else {
                inDoubt.append(streams[slot].tag)
            }
        }
        let start = eventBytes.count
        debugData.append(to: &eventBytes)
        records.append(
            .goawayReceived(
                HTTP2GoawayOf(
                    lastStreamID: lastStreamID, errorCode: HTTP2ErrorCode(rawValue: errorCode),
                    debugData: HTTP2ByteSpan(start: start, count: debugData.count), unprocessedTags: unprocessed,
                    inDoubtTags: inDoubt)))
    }
}
