import APNSCore

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
        guard let slot, streams.isInUse(slot), streams[slot].phase != .answered, !streams[slot].cancelled else { return }
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
                records.append(.remoteSettingsChanged(limit))
            }
        case .ping(let isAck, let payload):
            if isAck { records.append(.pingAcknowledged(payload)) }
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
            if endStream, let slot, streams.isInUse(slot), streams[slot].phase == .sent { streams[slot].phase = .complete }
        case .goaway:
            slots.stopAccepting()
        default:
            break
        }
    }

    func nghttp2StreamClosed(streamID: Int32, slot: Int?, errorCode: UInt32) {
        guard let slot, streams.isInUse(slot) else { return }
        if streams[slot].phase != .answered, !streams[slot].cancelled {
            let failure = Self.failure(of: streams[slot], closedWith: errorCode, serverSpoke: slots.hasReceivedPeerSettings)
            records.append(.streamFailed(tag: streams[slot].tag, streamID: streams[slot].streamID, failure: failure))
        }
        streams.release(slot)
        slots.streamClosed()
    }

    func nghttp2ReadBody(streamID: Int32, slot: Int, into window: Nghttp2OutputWindow) -> (count: Int, isLast: Bool)? {
        guard streams.isInUse(slot) else { return nil }
        let count = window.fill(from: streams[slot].body, offset: streams[slot].bodyOffset)
        streams[slot].bodyOffset += count
        return (count, streams[slot].bodyOffset >= streams[slot].body.count)
    }

    func nghttp2ConnectionFailed(_ error: HTTP2Error) {
        records.append(.connectionError(error))
    }

    /// How a stream that ended without a complete response is classified. `serverSpoke`: whether the server's
    /// first SETTINGS frame (its connection preface, which must come before anything else it sends) arrived;
    /// before it the server cannot have processed any request.
    static func failure(of stream: HTTP2ClientStream, closedWith errorCode: UInt32, serverSpoke: Bool) -> TransportFailure {
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
        records.append(.response(
            tag: streams[slot].tag, streamID: streams[slot].streamID, status: streams[slot].status, apnsID: apnsID,
            apnsUniqueID: uniqueID, body: body))
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
        records.append(.goaway(
            lastStreamID: lastStreamID, errorCode: errorCode, debugData: HTTP2ByteSpan(start: start, count: debugData.count),
            unprocessed: unprocessed, inDoubt: inDoubt))
    }
}
