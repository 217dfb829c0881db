/// The server side of one HTTP/2 connection, in memory, for the mock APNs server: bytes in (`receive`), bytes out
/// (`produceOutput`), complete requests out (`drainEvents`), responses in (`respond`), plus the levers a mock
/// pulls: the stream limit, GOAWAY, RST_STREAM, PING. It owns the nghttp2 session and the stream slots; it does
/// no I/O and is used from one thread.
public final class HTTP2ServerSession: HTTP2Session {
    /// The settings the session was created with.
    public let configuration: HTTP2ServerConfiguration
    @exclusivity(unchecked)
    var streams = HTTP2StreamSlotTable<HTTP2ServerStream>()
    /// Field lists and bodies of answered requests, for the next ones.
    @exclusivity(unchecked)
    var requestStorage = HTTP2ServerRequestStorage()
    @exclusivity(unchecked)
    var events: [HTTP2ServerEvent] = []
    @exclusivity(unchecked)
    private var isDraining = false
    /// Resets of streams not answered yet, against `configuration.resetRateLimit`.
    @exclusivity(unchecked)
    private var resetLimiter: HTTP2ResetRateLimiter
    /// Set inside a callback when a reset went over the limit; the session ends once nghttp2 returns.
    @exclusivity(unchecked)
    private var resetLimitExceeded = false
    /// The section 5.1 rules nghttp2 does not apply to frames on closed streams and lower stream ids.
    @exclusivity(unchecked)
    private var streamCheck = HTTP2InboundStreamCheck()
    /// Streams owed an RST_STREAM STREAM_CLOSED once nghttp2 has read the input.
    @exclusivity(unchecked)
    private var streamsClosedErrors: [Int32] = []
    /// The input broke a connection rule nghttp2 does not check: the session is ending, no more input is read.
    @exclusivity(unchecked)
    private var inputRefused = false
    /// A stream limit the session applies itself, already on the wire (see `refuseStreams(over:)`); nil when
    /// nghttp2's own limit is the one that holds.
    @exclusivity(unchecked)
    private var unannouncedStreamLimit: Int?
    /// Streams over `unannouncedStreamLimit`, owed an RST_STREAM REFUSED_STREAM once nghttp2 has read the input.
    @exclusivity(unchecked)
    private var streamsRefused: [Int32] = []
    /// The SETTINGS_MAX_CONCURRENT_STREAMS most recently announced (it applies once the client acknowledges it,
    /// see `.settingsAcknowledged`; nghttp2 refuses streams over it from the moment it is queued).
    @exclusivity(unchecked)
    public private(set) var announcedMaxConcurrentStreams: Int

    /// A server session with `configuration`; throws when nghttp2 cannot create it.
    public init(configuration: HTTP2ServerConfiguration = HTTP2ServerConfiguration()) throws(HTTP2Error) {
        try configuration.validate()
        self.configuration = configuration
        self.announcedMaxConcurrentStreams = configuration.maxConcurrentStreams
        self.resetLimiter = HTTP2ResetRateLimiter(configuration.resetRateLimit)
        try super.init(
            Nghttp2Session.Start(
                role: .server,
                enablePush: nil,
                maxConcurrentStreams: UInt32(configuration.maxConcurrentStreams),
                initialWindowSize: UInt32(configuration.receiveWindows.stream),
                connectionWindowSize: Int32(configuration.receiveWindows.connection),
                assumedPeerMaxConcurrentStreams: nil))
        nghttp2.attach(self)
    }

    /// Streams the client opened that have not closed.
    public var openStreamCount: Int { streams.count }
    /// The highest client stream id nghttp2 has passed to us (the natural GOAWAY last-stream-id).
    public var lastProcessedStreamID: Int32 { nghttp2.lastProcessedStreamID }
    /// Whether events are waiting to be taken.
    public var hasEvents: Bool { !events.isEmpty }

    /// Answers the request on `streamID`: `:status`, then `fields` (copied now), then `body` (kept, not copied,
    /// until the stream ends; empty sends no DATA). Throws `streamNotFound` when the stream has closed (reset by
    /// the client, cut off by GOAWAY) or was answered already.
    public func respond(to streamID: Int32, status: Int, fields: HTTP2HeaderFieldList, body: [UInt8]) throws(HTTP2Error)
    {
        guard !isClosed else { throw .sessionClosing }
        guard (100...999).contains(status) else { throw .invalidArgument("status \(status)") }
        guard let slot = nghttp2.slot(of: streamID), streams.isInUse(slot), !streams[slot].hasResponse else {
            throw .streamNotFound
        }
        streams[slot].hasResponse = true
        streams[slot].responseBody = HTTP2OutgoingBody(bytes: body)
        let result = nghttp2.submitResponse(
            streamID: streamID, status: status, fields: fields, slot: slot, hasBody: !body.isEmpty)
        guard result == 0 else {
            streams[slot].hasResponse = false
            streams[slot].responseBody = HTTP2OutgoingBody()
            throw Nghttp2Session.error(result)
        }
        streams[slot].phase = .responding
    }

    /// `respond` with fields from text (tests, tools).
    public func respond(to streamID: Int32, status: Int, headers: [(String, String)] = [], body: [UInt8] = [])
        throws(HTTP2Error)
    {
        var fields = HTTP2HeaderFieldList()
        for (name, value) in headers { fields.append(name: name, value: value) }
        try respond(to: streamID, status: status, fields: fields, body: body)
    }

    /// Announces a new SETTINGS_MAX_CONCURRENT_STREAMS. nghttp2 refuses (REFUSED_STREAM) new streams over it at
    /// once; the client applies it when the SETTINGS frame arrives.
    public func setMaxConcurrentStreams(_ limit: Int) throws(HTTP2Error) {
        guard !isClosed else { throw .sessionClosing }
        guard (0...Int(UInt32.max)).contains(limit) else { throw .invalidArgument("max concurrent streams \(limit)") }
        let result = nghttp2.submitMaxConcurrentStreams(UInt32(limit))
        guard result == 0 else { throw Nghttp2Session.error(result) }
        announcedMaxConcurrentStreams = limit
        unannouncedStreamLimit = nil
    }

    /// Refuses (REFUSED_STREAM) each new stream that would take the open streams over `limit`, with no SETTINGS
    /// frame: for a limit the client already has on the wire but nghttp2 does not enforce (the mock's rewritten
    /// first SETTINGS). A second, identical SETTINGS would reach the client where it waits for the ACK of its own
    /// (h2spec counts that against the server). The next `setMaxConcurrentStreams` ends it.
    public func refuseStreams(over limit: Int) {
        unannouncedStreamLimit = max(0, limit)
        announcedMaxConcurrentStreams = max(0, limit)
    }

    /// Sends GOAWAY with `lastStreamID` (nil: the last stream processed). Streams above it are closed (the client
    /// treats them as unprocessed). Graceful (`closeAfterSending` false): streams at or below it can still be
    /// answered and the session closes when they are done. Immediate (`closeAfterSending` true): the session
    /// closes as soon as the GOAWAY is out, and the owner closes the connection.
    public func sendGoaway(
        lastStreamID: Int32? = nil, errorCode: HTTP2ErrorCode = .noError, debugData: [UInt8] = [],
        closeAfterSending: Bool = false
    ) throws(HTTP2Error) {
        guard !isClosed else { throw .sessionClosing }
        let last = lastStreamID ?? nghttp2.lastProcessedStreamID
        let result = nghttp2.submitGoaway(lastStreamID: last, errorCode: errorCode, debugData: debugData)
        guard result == 0 else { throw Nghttp2Session.error(result) }
        if closeAfterSending { closesWhenOutputDrained = true }
    }

    /// Resets `streamID` (REFUSED_STREAM tells the client it was not processed).
    public func resetStream(_ streamID: Int32, errorCode: HTTP2ErrorCode) throws(HTTP2Error) {
        guard !isClosed else { throw .sessionClosing }
        let result = nghttp2.submitReset(streamID: streamID, errorCode: errorCode)
        guard result == 0 else { throw Nghttp2Session.error(result) }
    }

    /// Delivers the recorded events in order, then empties the list (events recorded meanwhile are delivered too).
    public func drainEvents(_ handler: (HTTP2ServerEvent) -> Void) {
        guard !isDraining else { return }
        isDraining = true
        defer { isDraining = false }
        var index = 0
        while index < events.count {
            handler(events[index])
            index += 1
        }
        events.removeAll(keepingCapacity: true)
    }

    /// Hands a request from `drainEvents` back once it is answered and nothing keeps it: its field list and body
    /// become the storage of a later request, so a busy connection stops allocating per request. Optional. Up to
    /// the stream limit's worth are kept (a client cannot have more out at once).
    public func recycle(_ request: HTTP2ServerRequest) {
        requestStorage.recycle(request, keepingAtMost: max(64, announcedMaxConcurrentStreams))
    }

    /// The recorded events as an array.
    public func takeEvents() -> [HTTP2ServerEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// Feeds bytes read from the connection, after `HTTP2InboundStreamCheck`: a frame that breaks a connection
    /// rule ends the session (GOAWAY with its error code) and nothing from it on is read.
    public override func receive(_ bytes: RawSpan) {
        guard !isClosed, !inputRefused else { return }
        guard let error = streamCheck.check(bytes, streamErrors: &streamsClosedErrors) else {
            super.receive(bytes)
            return
        }
        inputRefused = true
        if error.offset > 0 { super.receive(bytes.extracting(0..<error.offset)) }
        guard !isClosed else { return }
        _ = nghttp2.terminate(errorCode: error.code, reason: error.reason)
    }

    /// Once nghttp2 has read the input: the RST_STREAM STREAM_CLOSED owed for frames on streams the client had
    /// reset; and a client that reset unanswered streams too fast (rapid reset) loses the connection: GOAWAY
    /// ENHANCE_YOUR_CALM, reported as a `.connectionError` when it goes out.
    override func inputProcessed() {
        // DATA or HEADERS on a stream the client had reset (nghttp2 read and ignored them, HPACK kept in step).
        for streamID in streamsClosedErrors { _ = nghttp2.submitReset(streamID: streamID, errorCode: .streamClosed) }
        streamsClosedErrors.removeAll(keepingCapacity: true)
        for streamID in streamsRefused { _ = nghttp2.submitReset(streamID: streamID, errorCode: .refusedStream) }
        streamsRefused.removeAll(keepingCapacity: true)
        guard resetLimitExceeded else { return }
        resetLimitExceeded = false
        _ = nghttp2.terminate(errorCode: .enhanceYourCalm, reason: "too many resets of streams not answered yet")
    }

    /// Monotonic seconds, for the reset limit.
    private static func monotonicSeconds() -> Double {
        let elapsed = ContinuousClock.now - Self.clockOrigin
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    private static let clockOrigin = ContinuousClock.now

    override func recordConnectionError(_ error: HTTP2Error) {
        events.append(.connectionError(error))
    }

    /// Forgets the open streams.
    override func sessionEnded() {
        for slot in streams.slotsInUse { streams.release(slot) }
    }
}

// MARK: - EventSink

/// What the server records from inside nghttp2's callbacks: request fields and bodies into the stream slots,
/// complete requests and everything else into `events`. Nothing here calls nghttp2.
extension HTTP2ServerSession: Nghttp2EventSink {
    func nghttp2BeginHeaders(streamID: Int32, slot: Int?, isRequest: Bool) -> Int? {
        guard isRequest, slot == nil else { return nil }
        if let limit = unannouncedStreamLimit, streams.count >= limit {
            streamsRefused.append(streamID)  // no slot: its fields and body are read and dropped
            return nil
        }
        let claimed = streams.claim()
        streams[claimed].phase = .receiving
        streams[claimed].streamID = streamID
        return claimed
    }

    func nghttp2Header(streamID: Int32, slot: Int?, name: Nghttp2BorrowedBytes, value: Nghttp2BorrowedBytes) {
        guard let slot, streams.isInUse(slot), streams[slot].streamID == streamID, streams[slot].phase == .receiving
        else { return }
        streams[slot].fields.append(received: name, value: value)
    }

    func nghttp2DataChunk(streamID: Int32, slot: Int?, bytes: Nghttp2BorrowedBytes) {
        guard let slot, streams.isInUse(slot), streams[slot].phase == .receiving else { return }
        let room = configuration.maximumRequestBodyBytes - streams[slot].body.count
        bytes.append(to: &streams[slot].body, limit: room)
        streams[slot].bodyByteCount += bytes.count
    }

    func nghttp2FrameReceived(_ frame: Nghttp2FrameSummary, slot: Int?) {
        switch frame {
        case .headers(_, let endStream, _), .data(_, let endStream):
            guard endStream, let slot, streams.isInUse(slot), streams[slot].phase == .receiving else { return }
            streams[slot].phase = .received
            events.append(.request(requestStorage.takeRequest(from: &streams[slot])))
        case .settings(let isAck, _):
            if isAck { events.append(.settingsAcknowledged) }
        case .ping(let isAck, let payload):
            if isAck { events.append(.pingAcknowledged(payload: payload)) }
        case .goaway(let lastStreamID, let errorCode, let debugData):
            var bytes: [UInt8] = []
            debugData.append(to: &bytes)
            events.append(
                .goawayReceived(
                    lastStreamID: lastStreamID, errorCode: HTTP2ErrorCode(rawValue: errorCode), debugData: bytes))
        case .resetStream:
            // A reset of a stream whose answer went out (gone, or `.responded`) costs the client nothing: clients
            // cancel streams after reading their answers. Resets of streams still waiting for theirs count.
            guard let slot, streams.isInUse(slot), streams[slot].phase != .responded else { return }
            if !resetLimiter.allowReset(at: Self.monotonicSeconds()) { resetLimitExceeded = true }
        case .other:
            break
        }
    }

    func nghttp2FrameSent(_ frame: Nghttp2FrameSummary, slot: Int?) {
        switch frame {
        case .headers(_, let endStream, _), .data(_, let endStream):
            if endStream, let slot, streams.isInUse(slot), streams[slot].hasResponse {
                streams[slot].phase = .responded
            }
        default:
            break
        }
    }

    func nghttp2StreamClosed(streamID: Int32, slot: Int?, errorCode: UInt32) {
        guard let slot, streams.isInUse(slot) else { return }
        if streams[slot].phase != .responded {
            events.append(.streamClosed(streamID: streamID, errorCode: HTTP2ErrorCode(rawValue: errorCode)))
        }
        streams.release(slot)
    }

    func nghttp2ReadBody(streamID: Int32, slot: Int, into window: Nghttp2OutputWindow) -> (count: Int, isLast: Bool)? {
        guard streams.isInUse(slot) else { return nil }
        return streams[slot].responseBody.fill(window)
    }

    func nghttp2ConnectionFailed(_ error: HTTP2Error) {
        recordConnectionError(error)
    }
}

// MARK: - HTTP2ServerRequest

/// One request as an `HTTP2ServerSession` received it: every header field raw and in arrival order (pseudo-header
/// fields included, duplicates kept, so a mock can answer DuplicateHeaders), and the body. Owns its bytes.
public struct HTTP2ServerRequest: Sendable {
    /// The stream the request came on (answer it with `HTTP2ServerSession.respond(to:…)`).
    public let streamID: Int32
    /// All header fields as received, in order.
    public let fields: HTTP2HeaderFieldList
    /// The body (at most `maximumRequestBodyBytes` of it).
    public let body: [UInt8]
    /// The body's full length as received, which may exceed `body.count`.
    public let bodyByteCount: Int

    /// A request from its stream, header fields and body; `bodyByteCount` counts the bytes received.
    public init(streamID: Int32, fields: HTTP2HeaderFieldList, body: [UInt8], bodyByteCount: Int) {
        self.streamID = streamID
        self.fields = fields
        self.body = body
        self.bodyByteCount = bodyByteCount
    }

    /// `:method`
    public var method: ArraySlice<UInt8>? { fields.firstValue(of: ":method") }
    /// `:path`
    public var path: ArraySlice<UInt8>? { fields.firstValue(of: ":path") }
    /// `:authority`
    public var authority: ArraySlice<UInt8>? { fields.firstValue(of: ":authority") }
    /// `:scheme`
    public var scheme: ArraySlice<UInt8>? { fields.firstValue(of: ":scheme") }

    /// The regular (non-pseudo) header fields, in arrival order, duplicates included.
    public var headers: [(name: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] {
        (0..<fields.count).filter { !fields.isPseudo(at: $0) }.map { (fields.name(at: $0), fields.value(at: $0)) }
    }

    /// Calls `body` with each regular header field, in arrival order, without allocating.
    public func forEachHeader(_ body: (_ name: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>) -> Void) {
        for index in 0..<fields.count where !fields.isPseudo(at: index) {
            body(fields.name(at: index), fields.value(at: index))
        }
    }
}

// MARK: - HTTP2ServerEvent

/// Something that happened on a server session, delivered by `HTTP2ServerSession.drainEvents` after nghttp2 has
/// returned.
public enum HTTP2ServerEvent: Sendable {
    /// A complete request (END_STREAM received). Answer it with `respond(to:…)` or `resetStream`.
    case request(HTTP2ServerRequest)
    /// A stream ended before its response was completely sent: the client reset it, a GOAWAY cut it off, or
    /// nghttp2 reset a malformed request. `respond` to it now throws `streamNotFound`.
    case streamClosed(streamID: Int32, errorCode: HTTP2ErrorCode)
    /// The client sent GOAWAY.
    case goawayReceived(lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8])
    /// The client acknowledged one of our SETTINGS frames (in order): the stream limit it carried is in force.
    case settingsAcknowledged
    /// The client acknowledged one of our PINGs.
    case pingAcknowledged(payload: UInt64)
    /// The connection failed: nghttp2 rejected the input (for example bytes that are not an HTTP/2 client
    /// preface), or found a protocol violation and sent GOAWAY. The session is closed.
    case connectionError(HTTP2Error)
}
