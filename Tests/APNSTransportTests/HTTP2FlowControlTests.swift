@testable import APNSHTTP2
import Testing
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
            server: HTTP2ServerConfiguration(maxConcurrentStreams: 1000, initialStreamWindowSize: 65_535, connectionWindowSize: 65_535),
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
            client: HTTP2ClientConfiguration(initialStreamWindowSize: 1000, connectionWindowSize: 65_535, maximumResponseBodyBytes: 3000),
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
