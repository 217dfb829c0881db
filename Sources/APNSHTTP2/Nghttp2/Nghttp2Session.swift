internal import CNghttp2

/// Owns one `nghttp2_session` (client or server role), driven on memory buffers only: `receive` feeds
/// `nghttp2_session_mem_recv`, `produceOutput` drains `nghttp2_session_mem_send`. Its C callbacks
/// (`Nghttp2Callbacks`) report to `sink`, the session object that owns this one. Frees the nghttp2 session and
/// its scratch memory in `deinit`.
///
/// The sink is held unmanaged (`attach`): the owner holds this object strongly and outlives it, and callbacks only
/// run inside `receive`/`produceOutput`, which only the owner calls. It is kept as its concrete session type, so a
/// callback reaches it without taking a reference (an `unowned(unsafe)` existential was retained and released
/// around every callback, several per request).
final class Nghttp2Session {
    enum Role { case client, server }

    /// What to announce and assume when the session starts.
    struct Start {
        var role: Role
        /// SETTINGS_ENABLE_PUSH to announce, if any (a client announces 0).
        var enablePush: Bool?
        /// SETTINGS_MAX_CONCURRENT_STREAMS to announce, if any.
        var maxConcurrentStreams: UInt32?
        /// SETTINGS_INITIAL_WINDOW_SIZE to announce.
        var initialWindowSize: UInt32
        /// The connection-level receive window to open up to (WINDOW_UPDATE on stream 0), if above 65,535.
        var connectionWindowSize: Int32
        /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS to assume until its first SETTINGS frame.
        var assumedPeerMaxConcurrentStreams: UInt32?
    }

    let session: OpaquePointer
    /// The memory nghttp2 allocates for this session; released after the session (`deinit`).
    private let memory = Nghttp2MemoryPool()
    /// The lengths of the header names the sink reads, one bit each (bit 63 for 63 and longer): the header
    /// callback drops other fields before reaching the sink. All by default; a client reads only `:status` and
    /// `apns-id` (7) and `apns-unique-id` (14).
    var headerNameLengths: UInt64 = ~0
    private(set) var clientSink: Unmanaged<HTTP2ClientSession>?
    private(set) var serverSink: Unmanaged<HTTP2ServerSession>?
    /// The slot of the stream whose header block is being received (header callbacks come in one run).
    var headerBlockSlot: Int?
    /// The last error text nghttp2 reported (error callback), for a connection error's description.
    var lastErrorText = ""
    /// GOAWAYs with a non-zero error code that the owner queued and that have not gone out yet: a GOAWAY with an
    /// error code that is not one of these is nghttp2 ending the connection over a protocol violation.
    var ownGoawaysWithError = 0
    /// Scratch entries for building a HEADERS frame's field list; grows, never shrinks.
    var entries: UnsafeMutablePointer<nghttp2_nv>
    var entryCapacity: Int

    init(_ start: Start) throws(HTTP2Error) {
        let callbacks = try Nghttp2Callbacks.make()
        defer { nghttp2_session_callbacks_del(callbacks) }
        var optionPointer: OpaquePointer?
        var status = nghttp2_option_new(&optionPointer)
        guard status == 0, let option = optionPointer else { throw Self.error(status) }
        defer { nghttp2_option_del(option) }
        if let assumed = start.assumedPeerMaxConcurrentStreams {
            nghttp2_option_set_peer_max_concurrent_streams(option, assumed)
        }
        // Streams that closed are not kept for priority bookkeeping: nothing here uses priorities.
        nghttp2_option_set_no_closed_streams(option, 1)
        if start.role == .server {
            // nghttp2's rapid-reset limiter counts every RST_STREAM, also those of streams already answered (which
            // async-http-client sends on ~2% of streams): off here (a bucket that never runs dry);
            // HTTP2ServerSession limits resets of unanswered streams itself (HTTP2ResetRateLimit).
            nghttp2_option_set_stream_reset_rate_limit(option, UInt64.max, 0)
        }
        var sessionPointer: OpaquePointer?
        var allocator = memory.allocator
        switch start.role {
        case .client: status = nghttp2_session_client_new3(&sessionPointer, callbacks, nil, option, &allocator)
        case .server: status = nghttp2_session_server_new3(&sessionPointer, callbacks, nil, option, &allocator)
        }
        guard status == 0, let session = sessionPointer else { throw Self.error(status) }
        self.session = session
        self.entryCapacity = 32
        self.entries = .allocate(capacity: 32)
        nghttp2_session_set_user_data(session, Unmanaged.passUnretained(self).toOpaque())

        var settings = [Self.entry(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, start.initialWindowSize)]
        if let enablePush = start.enablePush {
            settings.append(Self.entry(NGHTTP2_SETTINGS_ENABLE_PUSH, enablePush ? 1 : 0))
        }
        if let limit = start.maxConcurrentStreams {
            settings.append(Self.entry(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, limit))
        }
        status = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        guard status == 0 else { throw Self.error(status) }
        if start.connectionWindowSize > 65_535 {
            status = nghttp2_session_set_local_window_size(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, start.connectionWindowSize)
            guard status == 0 else { throw Self.error(status) }
        }
    }

    /// Makes `owner` the sink callbacks report to.
    func attach(_ owner: HTTP2ClientSession) {
        clientSink = Unmanaged.passUnretained(owner)
    }

    /// Makes `owner` the sink callbacks report to.
    func attach(_ owner: HTTP2ServerSession) {
        serverSink = Unmanaged.passUnretained(owner)
    }

    /// Forgets the sink (its owner is going away): callbacks from here on report nothing.
    func detach() {
        clientSink = nil
        serverSink = nil
    }

    /// Runs `body` with the sink, borrowed without a reference count; `failing` when there is none.
    @inline(__always)
    func withSink<Result>(failing: Result, _ body: (any Nghttp2EventSink) -> Result) -> Result {
        if let clientSink { return clientSink._withUnsafeGuaranteedRef { body($0) } }
        if let serverSink { return serverSink._withUnsafeGuaranteedRef { body($0) } }
        return failing
    }

    deinit {
        // Frees through `memory`, which stored properties' release frees after this body.
        nghttp2_session_del(session)
        entries.deallocate()
    }

    /// Feeds received bytes to nghttp2. Returns nil when all were taken, else the library error (the session is
    /// then unusable).
    func receive(_ bytes: RawSpan) -> HTTP2Error? {
        guard !bytes.isEmpty else { return nil }
        let result = bytes.withUnsafeBytes { buffer in
            nghttp2_session_mem_recv(session, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count)
        }
        if result < 0 { return Self.error(Int32(truncatingIfNeeded: result)) }
        return nil
    }

    /// Appends what nghttp2 has to send to `buffer`, until nothing is left or `limit` bytes were added. Returns
    /// the number of bytes added, or the library error (the session is then unusable).
    func produceOutput(into buffer: inout [UInt8], limit: Int) -> Result<Int, HTTP2Error> {
        var produced = 0
        while produced < limit {
            var chunk: UnsafePointer<UInt8>?
            let length = nghttp2_session_mem_send(session, &chunk)
            if length < 0 { return .failure(Self.error(Int32(truncatingIfNeeded: length))) }
            guard length > 0, let chunk else { break }
            buffer.append(contentsOf: UnsafeBufferPointer(start: chunk, count: length))
            produced += length
        }
        return .success(produced)
    }

    var wantsRead: Bool { nghttp2_session_want_read(session) != 0 }
    var wantsWrite: Bool { nghttp2_session_want_write(session) != 0 }

    /// Whether a client may still start a stream (no GOAWAY received, not terminating, stream ids left).
    var isRequestAllowed: Bool { nghttp2_session_check_request_allowed(session) != 0 }

    /// The stream id the next request would get (`nghttp2_session_get_next_stream_id`).
    var nextStreamID: UInt32 { nghttp2_session_get_next_stream_id(session) }

    /// The highest peer-started stream id that reached a callback (a server's GOAWAY last-stream-id).
    var lastProcessedStreamID: Int32 { nghttp2_session_get_last_proc_stream_id(session) }

    /// Called when a GOAWAY went out: the connection error it stands for when nghttp2 (not the owner) sent it
    /// with an error code, else nil.
    func goawaySent(_ errorCode: UInt32, _ debugData: Nghttp2BorrowedBytes) -> HTTP2Error? {
        guard errorCode != HTTP2ErrorCode.noError.rawValue else { return nil }
        if ownGoawaysWithError > 0 {
            ownGoawaysWithError -= 1
            return nil
        }
        let reason = debugData.isEmpty ? lastErrorText : debugData.text
        return .connectionTerminated(HTTP2ErrorCode(rawValue: errorCode), reason)
    }

    /// Makes the next client stream id `streamID` (tests reach the end of the stream-id space this way).
    func setNextStreamID(_ streamID: Int32) -> Bool {
        nghttp2_session_set_next_stream_id(session, streamID) == 0
    }

    /// The slot attached to `streamID`, if the stream exists and has one.
    func slot(of streamID: Int32) -> Int? {
        guard streamID > 0 else { return nil }
        return Self.slot(from: nghttp2_session_get_stream_user_data(session, streamID))
    }

    /// Attaches `slot` to an existing stream.
    func attach(slot: Int, to streamID: Int32) {
        _ = nghttp2_session_set_stream_user_data(session, streamID, Self.pointer(for: slot))
    }

    /// A slot number as the non-null pointer nghttp2 stores (stream user data, data source).
    static func pointer(for slot: Int) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: slot + 1)
    }

    static func slot(from pointer: UnsafeMutableRawPointer?) -> Int? {
        guard let pointer else { return nil }
        return Int(bitPattern: pointer) - 1
    }

    static func entry(_ id: nghttp2_settings_id, _ value: UInt32) -> nghttp2_settings_entry {
        nghttp2_settings_entry(settings_id: Int32(id.rawValue), value: value)
    }

    /// An `HTTP2Error` for a negative nghttp2 library code, with nghttp2's own text.
    static func error(_ code: Int32) -> HTTP2Error {
        .library(code, String(cString: nghttp2_strerror(code)))
    }
}

// MARK: - Submit

/// Everything the sessions queue for sending. None of these may be called from inside a callback.
extension Nghttp2Session {
    /// Queues a request: the block's pseudo-header fields, the list's pseudo-header fields, then the regular fields
    /// of each. The block's bytes are referenced (NO_COPY, the caller keeps the block alive until the stream ends);
    /// the list's bytes are copied by nghttp2 before this returns. With `hasBody`, DATA frames are read from the
    /// stream's slot through `Nghttp2EventSink.nghttp2ReadBody`. Returns the stream id, or a negative nghttp2 code.
    func submitRequest(block: Nghttp2HeaderBlockStorage?, fields: HTTP2HeaderFieldList, slot: Int, hasBody: Bool)
        -> Int32
    {
        reserveEntries((block?.count ?? 0) + fields.count)
        return fields.bytes.withUnsafeBufferPointer { bytes in
            var count = 0
            if let block {
                block.copyEntries(0..<block.pseudoCount, to: entries)
                count = block.pseudoCount
            }
            count = appendEntries(of: fields, pseudo: true, bytes: bytes, at: count)
            if let block {
                block.copyEntries(block.pseudoCount..<block.count, to: entries + count)
                count += block.count - block.pseudoCount
            }
            count = appendEntries(of: fields, pseudo: false, bytes: bytes, at: count)
            let user = Self.pointer(for: slot)
            guard hasBody else { return nghttp2_submit_request(session, nil, entries, count, nil, user) }
            var provider = nghttp2_data_provider(
                source: nghttp2_data_source(ptr: user), read_callback: Nghttp2Callbacks.readBody)
            return nghttp2_submit_request(session, nil, entries, count, &provider, user)
        }
    }

    /// Queues a response on `streamID`: `:status`, then the list's fields (copied by nghttp2 before this returns).
    /// With `hasBody`, DATA frames are read from `slot` through `nghttp2ReadBody`. Returns 0 or a negative code.
    func submitResponse(streamID: Int32, status: Int, fields: HTTP2HeaderFieldList, slot: Int, hasBody: Bool) -> Int32 {
        reserveEntries(1 + fields.count)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            let digitCount = Self.writeDecimal(status, into: digits)
            return fields.bytes.withUnsafeBufferPointer { bytes in
                let name: StaticString = ":status"
                entries[0] = nghttp2_nv(
                    name: UnsafeMutablePointer(mutating: name.utf8Start), value: digits.baseAddress,
                    namelen: name.utf8CodeUnitCount, valuelen: digitCount,
                    flags: UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue))
                var count = appendEntries(of: fields, pseudo: true, bytes: bytes, at: 1)
                count = appendEntries(of: fields, pseudo: false, bytes: bytes, at: count)
                guard hasBody else { return nghttp2_submit_response(session, streamID, entries, count, nil) }
                var provider = nghttp2_data_provider(
                    source: nghttp2_data_source(ptr: Self.pointer(for: slot)), read_callback: Nghttp2Callbacks.readBody)
                return nghttp2_submit_response(session, streamID, entries, count, &provider)
            }
        }
    }

    /// Writes a non-negative `value` (a status code) in decimal into `buffer`; returns the digit count.
    private static func writeDecimal(_ value: Int, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var magnitude = value.magnitude
        var count = 0
        repeat {
            buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            count += 1
        } while magnitude > 0 && count < buffer.count
        buffer[0..<count].reverse()
        return count
    }

    /// Queues a SETTINGS frame announcing SETTINGS_MAX_CONCURRENT_STREAMS. Returns 0 or a negative code.
    func submitMaxConcurrentStreams(_ limit: UInt32) -> Int32 {
        var entry = Self.entry(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, limit)
        return nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entry, 1)
    }

    /// Queues a PING carrying `payload` (big-endian). Returns 0 or a negative code.
    func submitPing(payload: UInt64) -> Int32 {
        withUnsafeBytes(of: payload.bigEndian) { bytes in
            nghttp2_submit_ping(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Queues a GOAWAY (nghttp2 copies `debugData`). Returns 0 or a negative code.
    func submitGoaway(lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]) -> Int32 {
        let status = debugData.withUnsafeBufferPointer { bytes in
            nghttp2_submit_goaway(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, errorCode.rawValue, bytes.baseAddress,
                bytes.count)
        }
        if status == 0, errorCode != .noError { ownGoawaysWithError += 1 }
        return status
    }

    /// Ends the session: GOAWAY with `errorCode` and the last stream processed, then nothing more is read; `reason`
    /// becomes the connection error's text. Returns 0 or a negative code.
    func terminate(errorCode: HTTP2ErrorCode, reason: String) -> Int32 {
        lastErrorText = reason
        return nghttp2_session_terminate_session(session, errorCode.rawValue)
    }

    /// Queues an RST_STREAM. Returns 0 or a negative code.
    func submitReset(streamID: Int32, errorCode: HTTP2ErrorCode) -> Int32 {
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode.rawValue)
    }

    /// Writes the list's fields whose pseudo-ness is `pseudo` into `entries` from `index`; returns the next index.
    private func appendEntries(
        of fields: HTTP2HeaderFieldList, pseudo: Bool, bytes: UnsafeBufferPointer<UInt8>, at index: Int
    ) -> Int {
        let wanted = pseudo ? fields.pseudoCount : fields.count - fields.pseudoCount
        guard wanted > 0, let base = bytes.baseAddress else { return index }
        let neverIndexed = UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)
        var next = index
        for field in fields.fields where field.isPseudo == pseudo {
            entries[next] = nghttp2_nv(
                name: UnsafeMutablePointer(mutating: base + Int(field.nameStart)),
                value: UnsafeMutablePointer(mutating: base + Int(field.valueStart)),
                namelen: Int(field.nameCount), valuelen: Int(field.valueCount),
                flags: field.isIndexable ? UInt8(NGHTTP2_NV_FLAG_NONE.rawValue) : neverIndexed)
            next += 1
        }
        return next
    }

    /// Makes `entries` hold at least `count` entries.
    private func reserveEntries(_ count: Int) {
        guard count > entryCapacity else { return }
        let capacity = max(count, entryCapacity * 2)
        entries.deallocate()
        entries = .allocate(capacity: capacity)
        entryCapacity = capacity
    }
}
