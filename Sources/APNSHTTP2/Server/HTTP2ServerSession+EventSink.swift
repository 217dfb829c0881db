/// What the server records from inside nghttp2's callbacks: request fields and bodies into the stream slots,
/// complete requests and everything else into `events`. Nothing here calls nghttp2.
extension HTTP2ServerSession: Nghttp2EventSink {
    func nghttp2BeginHeaders(streamID: Int32, slot: Int?, isRequest: Bool) -> Int? {
        guard isRequest, slot == nil else { return nil }
        return streams.claim(streamID: streamID)
    }

    func nghttp2Header(streamID: Int32, slot: Int?, name: Nghttp2BorrowedBytes, value: Nghttp2BorrowedBytes) {
        guard let slot, streams.isInUse(slot), streams[slot].streamID == streamID, streams[slot].phase == .receiving else { return }
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
            events.append(.request(streams.takeRequest(slot)))
        case .settings(let isAck, _):
            if isAck { events.append(.settingsAcknowledged) }
        case .ping(let isAck, let payload):
            if isAck { events.append(.pingAcknowledged(payload: payload)) }
        case .goaway(let lastStreamID, let errorCode, let debugData):
            var bytes: [UInt8] = []
            debugData.append(to: &bytes)
            events.append(.goawayReceived(lastStreamID: lastStreamID, errorCode: HTTP2ErrorCode(rawValue: errorCode), debugData: bytes))
        case .resetStream, .other:
            break
        }
    }

    func nghttp2FrameSent(_ frame: Nghttp2FrameSummary, slot: Int?) {
        switch frame {
        case .headers(_, let endStream, _), .data(_, let endStream):
            if endStream, let slot, streams.isInUse(slot), streams[slot].hasResponse { streams[slot].phase = .responded }
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
        let count = window.fill(from: streams[slot].responseBody, offset: streams[slot].responseOffset)
        streams[slot].responseOffset += count
        return (count, streams[slot].responseOffset >= streams[slot].responseBody.count)
    }

    func nghttp2ConnectionFailed(_ error: HTTP2Error) {
        events.append(.connectionError(error))
    }
}
