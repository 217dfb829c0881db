internal import CNghttp2

/// The C callbacks every `Nghttp2Session` registers. Each one checks its pointers, recovers the owning
/// `Nghttp2Session` from `user_data` (`Unmanaged`, unretained), turns the C arguments into Swift values and hands
/// them to the session's `Nghttp2EventSink`, which only records them. None of them calls back into nghttp2 except
/// the two stream-user-data accessors (a field read and a field store on a stream object; they send nothing,
/// queue nothing and run no callback). None throws; a broken invariant returns NGHTTP2_ERR_CALLBACK_FAILURE.
enum Nghttp2Callbacks {
    static let failure = NGHTTP2_ERR_CALLBACK_FAILURE.rawValue

    /// A callbacks object with every callback set; the caller frees it with `nghttp2_session_callbacks_del`
    /// (sessions copy it).
    static func make() throws(HTTP2Error) -> OpaquePointer {
        var pointer: OpaquePointer?
        let status = nghttp2_session_callbacks_new(&pointer)
        guard status == 0, let callbacks = pointer else { throw Nghttp2Session.error(status) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, beginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, header)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, dataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, frameReceived)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, frameSent)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, streamClosed)
        nghttp2_session_callbacks_set_error_callback2(callbacks, errorText)
        return callbacks
    }

    /// Runs `body` with the session behind a callback's `user_data` and its sink; `failing` when either is missing.
    /// The session is borrowed without a retain: its owner holds it through the nghttp2 call the callback runs in.
    private static func withContext<Result>(
        _ userData: UnsafeMutableRawPointer?, failing: Result, _ body: (Nghttp2Session, any Nghttp2EventSink) -> Result
    ) -> Result {
        guard let userData else { return failing }
        return Unmanaged<Nghttp2Session>.fromOpaque(userData)._withUnsafeGuaranteedRef { session in
            session.withSink(failing: failing) { sink in body(session, sink) }
        }
    }

    private static let beginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
        guard let frame else { return failure }
        return withContext(userData, failing: failure) { session, sink in
            let header = frame.pointee.hd
            guard header.type == UInt8(NGHTTP2_HEADERS.rawValue) else {
                session.headerBlockSlot = nil
                return 0
            }
            let isRequest = frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST
            var slot = session.slot(of: header.stream_id)
            if let claimed = sink.nghttp2BeginHeaders(streamID: header.stream_id, slot: slot, isRequest: isRequest) {
                session.attach(slot: claimed, to: header.stream_id)
                slot = claimed
            }
            session.headerBlockSlot = slot
            return 0
        }
    }

    private static let header: nghttp2_on_header_callback = {
        _, frame, name, nameLength, value, valueLength, _, userData in
        guard let frame, let userData else { return failure }
        let wanted = Unmanaged<Nghttp2Session>.fromOpaque(userData)._withUnsafeGuaranteedRef { $0.headerNameLengths }
        guard wanted & (1 &<< UInt64(min(nameLength, 63))) != 0 else { return 0 }  // a field the sink never reads
        return withContext(userData, failing: failure) { session, sink in
            guard frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
            sink.nghttp2Header(
                streamID: frame.pointee.hd.stream_id, slot: session.headerBlockSlot,
                name: Nghttp2BorrowedBytes(name, count: nameLength),
                value: Nghttp2BorrowedBytes(value, count: valueLength))
            return 0
        }
    }

    private static let dataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, userData in
        withContext(userData, failing: failure) { session, sink in
            sink.nghttp2DataChunk(
                streamID: streamID, slot: session.slot(of: streamID), bytes: Nghttp2BorrowedBytes(data, count: length))
            return 0
        }
    }

    private static let frameReceived: nghttp2_on_frame_recv_callback = { _, frame, userData in
        withFrame(frame, userData) { _, sink, summary, slot in sink.nghttp2FrameReceived(summary, slot: slot) }
    }

    private static let frameSent: nghttp2_on_frame_send_callback = { _, frame, userData in
        withFrame(frame, userData) { session, sink, summary, slot in
            sink.nghttp2FrameSent(summary, slot: slot)
            if case .goaway(_, let errorCode, let debugData) = summary,
                let error = session.goawaySent(errorCode, debugData)
            {
                sink.nghttp2ConnectionFailed(error)
            }
        }
    }

    /// `withContext` for the frame callbacks: `body` gets the frame's summary and the slot of its stream.
    private static func withFrame(
        _ frame: UnsafePointer<nghttp2_frame>?, _ userData: UnsafeMutableRawPointer?,
        _ body: (Nghttp2Session, any Nghttp2EventSink, Nghttp2FrameSummary, Int?) -> Void
    ) -> Int32 {
        guard let frame else { return failure }
        return withContext(userData, failing: failure) { session, sink in
            let summary = summarize(frame)
            body(session, sink, summary, session.slot(of: summary.streamID))
            return 0
        }
    }

    private static let streamClosed: nghttp2_on_stream_close_callback = { _, streamID, errorCode, userData in
        withContext(userData, failing: failure) { session, sink in
            sink.nghttp2StreamClosed(streamID: streamID, slot: session.slot(of: streamID), errorCode: errorCode)
            return 0
        }
    }

    private static let errorText: nghttp2_error_callback2 = { _, _, message, length, userData in
        withContext(userData, failing: failure) { session, _ in
            session.lastErrorText = Nghttp2BorrowedBytes(message, count: length).text
            return 0
        }
    }

    /// The data-source read callback of every request and response body; `source.ptr` holds the stream's slot.
    static let readBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, source, userData in
        guard let flags, let slot = Nghttp2Session.slot(from: source?.pointee.ptr) else { return Int(failure) }
        return withContext(userData, failing: Int(failure)) { _, sink in
            guard
                let read = sink.nghttp2ReadBody(
                    streamID: streamID, slot: slot, into: Nghttp2OutputWindow(buffer, count: length))
            else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
            if read.isLast { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
            return read.count
        }
    }

    /// The parts of a frame the sessions act on.
    private static func summarize(_ frame: UnsafePointer<nghttp2_frame>) -> Nghttp2FrameSummary {
        let header = frame.pointee.hd
        let endStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        let isAck = header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0
        switch UInt32(header.type) {
        case NGHTTP2_DATA.rawValue:
            return .data(streamID: header.stream_id, endStream: endStream)
        case NGHTTP2_HEADERS.rawValue:
            return .headers(
                streamID: header.stream_id, endStream: endStream,
                isRequest: frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST)
        case NGHTTP2_RST_STREAM.rawValue:
            return .resetStream(streamID: header.stream_id, errorCode: frame.pointee.rst_stream.error_code)
        case NGHTTP2_SETTINGS.rawValue:
            var maxConcurrentStreams: UInt32?
            let settings = frame.pointee.settings
            if let entries = settings.iv {
                for index in 0..<settings.niv
                where entries[index].settings_id == Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue) {
                    maxConcurrentStreams = entries[index].value
                }
            }
            return .settings(isAck: isAck, maxConcurrentStreams: maxConcurrentStreams)
        case NGHTTP2_PING.rawValue:
            let payload = withUnsafeBytes(of: frame.pointee.ping.opaque_data) {
                UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self))
            }
            return .ping(isAck: isAck, payload: payload)
        case NGHTTP2_GOAWAY.rawValue:
            let goaway = frame.pointee.goaway
            return .goaway(
                lastStreamID: goaway.last_stream_id, errorCode: goaway.error_code,
                debugData: Nghttp2BorrowedBytes(goaway.opaque_data, count: goaway.opaque_data_len))
        default:
            return .other(type: header.type, streamID: header.stream_id)
        }
    }
}

extension Nghttp2FrameSummary {
    /// The stream the frame belongs to (0 for connection frames).
    var streamID: Int32 {
        switch self {
        case .data(let streamID, _), .headers(let streamID, _, _), .resetStream(let streamID, _): return streamID
        case .other(_, let streamID): return streamID
        case .settings, .ping, .goaway: return 0
        }
    }
}

// MARK: - Nghttp2EventSink

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
