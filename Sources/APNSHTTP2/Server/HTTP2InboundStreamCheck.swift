/// The RFC 9113 section 5.1 rules on a client's DATA and HEADERS frames that nghttp2 1.52 lets pass silently
/// (with `no_closed_streams` it forgets closed streams and ignores frames on them, and it ignores a new stream
/// whose id is lower than an earlier one), checked on the raw input before nghttp2 reads it:
///
///     frame on stream S (client-initiated)       | answer
///     -------------------------------------------+---------------------------------------------------------------
///     DATA/HEADERS after the client reset S      | stream error STREAM_CLOSED (RST_STREAM), section 5.1 "closed"
///     DATA/HEADERS after the client's END_STREAM | connection error STREAM_CLOSED (GOAWAY), section 5.1 "closed"
///     HEADERS opening S below an earlier stream  | connection error PROTOCOL_ERROR (GOAWAY), section 5.1.1
///     anything else                              | nghttp2's own rules
///
/// The facts come from the client's own frames only (its END_STREAM flags, its RST_STREAMs, the stream ids it
/// opened and skipped), so a verdict never depends on what the server has answered yet, and streams the server
/// reset itself (REFUSED_STREAM) are left to nghttp2, which ignores frames on them as section 5.1 requires.
/// Memory is bounded: the last `rememberedStreams` streams the client ended or reset, and up to `skippedLimit`
/// ranges of skipped ids (clients skip none); a stream forgotten since is left to nghttp2 (which ignores it).
/// Frames are delimited by their 9-byte headers; payloads are skipped without being read.
struct HTTP2InboundStreamCheck {
    /// A connection error found in the input: feed nghttp2 only the bytes before `offset`, then end the session.
    struct ConnectionError: Equatable {
        let offset: Int
        let code: HTTP2ErrorCode
        let reason: String
    }

    /// How the client ended a stream.
    enum Ending: Equatable {
        case endStream
        case reset
    }

    static let rememberedStreams = 4096
    static let skippedLimit = 256
    private static let prefaceLength = 24
    private static let headerLength = 9

    private var prefaceLeft = Self.prefaceLength
    private var header: [UInt8] = []
    private var payloadLeft = 0
    /// The highest stream id the client has opened with HEADERS.
    private(set) var highestStreamID: Int32 = 0
    private var endings: [Int32: Ending] = [:]
    private var endingOrder: [Int32] = []
    private var nextEvicted = 0
    /// Stream ids the client skipped (implicitly closed, never opened), as ranges.
    private var skipped: [ClosedRange<Int32>] = []

    /// Reads the frame headers in `bytes` (the next input, in order). Streams that earn a stream error are appended
    /// to `streamErrors`; a connection error stops the check and is returned.
    mutating func check(_ bytes: RawSpan, streamErrors: inout [Int32]) -> ConnectionError? {
        var offset = 0
        let count = bytes.byteCount
        if prefaceLeft > 0 {
            let taken = min(prefaceLeft, count)
            prefaceLeft -= taken
            offset = taken
        }
        while offset < count {
            if payloadLeft > 0 {
                let skippedBytes = min(payloadLeft, count - offset)
                payloadLeft -= skippedBytes
                offset += skippedBytes
                continue
            }
            let frameStart = offset - header.count
            while header.count < Self.headerLength && offset < count {
                header.append(bytes.unsafeLoad(fromByteOffset: offset, as: UInt8.self))
                offset += 1
            }
            guard header.count == Self.headerLength else { break }
            payloadLeft = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
            let type = header[3]
            let flags = header[4]
            let streamID = Int32(
                bitPattern: (UInt32(header[5]) << 24 | UInt32(header[6]) << 16
                    | UInt32(header[7]) << 8 | UInt32(header[8])) & 0x7FFF_FFFF)
            header.removeAll(keepingCapacity: true)
            if let error = frame(type: type, flags: flags, streamID: streamID, streamErrors: &streamErrors) {
                return ConnectionError(offset: max(0, frameStart), code: error.code, reason: error.reason)
            }
        }
        return nil
    }

    /// The rules for one frame header.
    private mutating func frame(
        type: UInt8, flags: UInt8, streamID: Int32, streamErrors: inout [Int32]
    ) -> (code: HTTP2ErrorCode, reason: String)? {
        let data: UInt8 = 0x0
        let headers: UInt8 = 0x1
        let rstStream: UInt8 = 0x3
        guard streamID > 0, streamID & 1 == 1 else { return nil }  // connection frames, server-initiated ids
        if type == rstStream {
            if streamID <= highestStreamID { remember(streamID, .reset) }
            return nil
        }
        guard type == data || type == headers else { return nil }
        let endsStream = flags & 0x1 != 0
        if streamID > highestStreamID {
            guard type == headers else { return nil }  // DATA on an idle stream: nghttp2's PROTOCOL_ERROR
            if streamID > highestStreamID + 2 { noteSkipped((highestStreamID + 2)...(streamID - 2)) }
            highestStreamID = streamID
            if endsStream { remember(streamID, .endStream) }
            return nil
        }
        switch endings[streamID] {
        case .reset:
            streamErrors.append(streamID)
            return nil
        case .endStream:
            return (.streamClosed, "\(type == data ? "DATA" : "HEADERS") on stream \(streamID) after its END_STREAM")
        case nil:
            if type == headers, skipped.contains(where: { $0.contains(streamID) }) {
                return (.protocolError, "HEADERS opening stream \(streamID) after stream \(highestStreamID)")
            }
            if endsStream { remember(streamID, .endStream) }
            return nil
        }
    }

    private mutating func remember(_ streamID: Int32, _ ending: Ending) {
        if endings.updateValue(ending, forKey: streamID) != nil { return }
        if endingOrder.count < Self.rememberedStreams {
            endingOrder.append(streamID)
        } else {
            endings.removeValue(forKey: endingOrder[nextEvicted])
            endingOrder[nextEvicted] = streamID
            nextEvicted = (nextEvicted + 1) % Self.rememberedStreams
        }
    }

    private mutating func noteSkipped(_ range: ClosedRange<Int32>) {
        if skipped.count == Self.skippedLimit { skipped.removeFirst() }
        skipped.append(range)
    }
}
