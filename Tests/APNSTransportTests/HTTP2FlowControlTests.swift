import Testing

@testable import APNSHTTP2
@testable import APNSTransport

@Suite("HTTP2 sessions: flow control and bodies")
struct HTTP2FlowControlTests {
    /// A body of `count` bytes whose content depends on `tag`, so a mix-up between streams shows.
    static func body(tag: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(tag) &* 7) }
    }

    @Test("a 5120-byte voip body arrives whole, in small chunks")
    func voipBody() throws {
        let pair = try InMemoryHTTP2Pair(chunkSize: 1000)
        let payload = Self.body(tag: 1, count: 5120)
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 1)
        try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: payload, tag: 1)
        pair.onServerEvent = { [unowned pair] event in
            if case .request(let request) = event { try? APNSLikeTraffic.answer(request, on: pair.server) }
        }
        pair.interact()
        let request = try #require(pair.serverRequests.first)
        #expect(request.body == payload)
        #expect(pair.terminalTags == [1])
    }

    @Test("1000 concurrent 5120-byte bodies through the default 64 KiB windows: WINDOW_UPDATEs keep them flowing")
    func manyBodiesSmallWindows() throws {
        let pair = try InMemoryHTTP2Pair(
            server: HTTP2ServerConfiguration(
                maxConcurrentStreams: 1000, receiveWindows: HTTP2ReceiveWindows(stream: 65_535, connection: 65_535)),
            chunkSize: 4096)
        pair.interact()
        #expect(pair.client.availableStreamSlots == 1000)
        let block = try APNSLikeTraffic.block()
        var fields = HTTP2HeaderFieldList()
        var payloads: [UInt64: [UInt8]] = [:]
        for tag in UInt64(1)...1000 {
            let payload = Self.body(tag: tag, count: 5120)
            payloads[tag] = payload
            APNSLikeTraffic.fill(&fields, tag: tag)
            try pair.client.submitRequest(block: block, fields: fields, body: payload, tag: tag)
        }
        #expect(pair.client.availableStreamSlots == 0)
        var mismatches = 0
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            let tag = UInt64(request.streamID + 1) / 2
            if request.body != payloads[tag] { mismatches += 1 }
            try? APNSLikeTraffic.answer(request, on: pair.server)
        }
        pair.interact()
        #expect(pair.serverRequests.count == 1000)
        #expect(mismatches == 0)
        #expect(pair.terminalTags.count == 1000)
        #expect(Set(pair.terminalTags) == Set(1...1000))
        // Far more than one connection window went through.
        #expect(pair.bytesToServer > 1000 * 5120)
    }

    @Test("response bodies larger than the client's windows and the kept maximum")
    func largeResponses() throws {
        let pair = try InMemoryHTTP2Pair(
            client: HTTP2ClientConfiguration(
                receiveWindows: HTTP2ReceiveWindows(stream: 1000, connection: 65_535), maximumResponseBodyBytes: 3000),
            server: HTTP2ServerConfiguration(maxConcurrentStreams: 100))
        pair.interact()
        var fields = HTTP2HeaderFieldList()
        for tag in UInt64(1)...50 {
            APNSLikeTraffic.fill(&fields, tag: tag)
            try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: [], tag: tag)
        }
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            let tag = UInt64(request.streamID + 1) / 2
            try? pair.server.respond(to: request.streamID, status: 500, body: Self.body(tag: tag, count: 4000))
        }
        pair.interact()
        var bodies = 0
        for record in pair.clientRecords {
            guard case .response(let tag, _, let status, _, _, let body) = record else { continue }
            bodies += 1
            #expect(status == 500)
            #expect(body == Array(Self.body(tag: tag, count: 4000).prefix(3000)))
        }
        #expect(bodies == 50)
    }

    @Test("an answer past the kept maximum is taken as it stands and its stream reset: the rest is never read")
    func oversizedAnswerResetsItsStream() throws {
        let pair = try InMemoryHTTP2Pair(
            client: HTTP2ClientConfiguration(
                receiveWindows: HTTP2ReceiveWindows(stream: 16_384), maximumResponseBodyBytes: 3000),
            server: HTTP2ServerConfiguration(maxConcurrentStreams: 100), chunkSize: 4096)
        pair.interact()
        var fields = HTTP2HeaderFieldList()
        for tag in UInt64(1)...5 {
            APNSLikeTraffic.fill(&fields, tag: tag)
            try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: [], tag: tag)
        }
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            try? pair.server.respond(to: request.streamID, status: 400, body: Self.body(tag: 1, count: 2_000_000))
        }
        pair.interact()
        let answers = pair.clientRecords.filter { if case .response = $0 { true } else { false } }
        #expect(answers.count == 5, "each answered once")
        #expect(pair.bytesToClient < 5 * 300_000, "\(pair.bytesToClient) bytes read for five capped answers")
    }

    @Test("a request whose body never left (no flow-control window) was not sent; a complete one is in doubt")
    func endStreamDecidesWhatWasSent() throws {
        let pair = try InMemoryHTTP2Pair(
            server: HTTP2ServerConfiguration(maxConcurrentStreams: 100, receiveWindows: HTTP2ReceiveWindows(stream: 1)))
        pair.interact()
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 1)
        try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: [], tag: 1)
        APNSLikeTraffic.fill(&fields, tag: 2)
        let stalled = try pair.client.submitRequest(
            block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: 2)
        for _ in 0..<3 { pair.step() }
        #expect(pair.client.cancelRequest(streamID: stalled) == false, "its END_STREAM never left")
        pair.client.connectionClosed()
        pair.drainClient()
        #expect(pair.clientRecords.contains(.failed(tag: 1, streamID: 1, failure: .connectionEndedBeforeAnswer)))
        #expect(
            !pair.clientRecords.contains { if case .failed(2, _, _) = $0 { true } else { false } },
            "cancelled: reported by its owner")
    }

    @Test("the server keeps at most maximumRequestBodyBytes but counts every byte")
    func requestBodyLimit() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maximumRequestBodyBytes: 4096))
        let payload = Self.body(tag: 3, count: 6000)
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 1)
        try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: payload, tag: 1)
        pair.interact()
        let request = try #require(pair.serverRequests.first)
        #expect(request.body == Array(payload.prefix(4096)))
        #expect(request.bodyByteCount == 6000)
    }
}
