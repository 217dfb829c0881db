internal import CNghttp2

/// Everything the sessions queue for sending. None of these may be called from inside a callback.
extension Nghttp2Session {
    /// Queues a request: the block's pseudo-header fields, the list's pseudo-header fields, then the regular fields
    /// of each. The block's bytes are referenced (NO_COPY, the caller keeps the block alive until the stream ends);
    /// the list's bytes are copied by nghttp2 before this returns. With `hasBody`, DATA frames are read from the
    /// stream's slot through `Nghttp2EventSink.nghttp2ReadBody`. Returns the stream id, or a negative nghttp2 code.
    func submitRequest(block: Nghttp2HeaderBlockStorage?, fields: HTTP2HeaderFieldList, slot: Int, hasBody: Bool) -> Int32 {
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
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: user), read_callback: Nghttp2Callbacks.readBody)
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
                    namelen: name.utf8CodeUnitCount, valuelen: digitCount, flags: UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue))
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
            nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Queues a GOAWAY (nghttp2 copies `debugData`). Returns 0 or a negative code.
    func submitGoaway(lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]) -> Int32 {
        let status = debugData.withUnsafeBufferPointer { bytes in
            nghttp2_submit_goaway(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, errorCode.rawValue, bytes.baseAddress, bytes.count)
        }
        if status == 0, errorCode != .noError { ownGoawaysWithError += 1 }
        return status
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
