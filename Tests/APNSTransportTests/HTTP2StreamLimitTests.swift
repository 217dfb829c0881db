import APNSCore
import Testing

@testable import APNSHTTP2
@testable import APNSTransport

@Suite("HTTP2 sessions: stream limits")
struct HTTP2StreamLimitTests {
    /// Drives `total` requests through `pair`, submitting whenever the client has slots, and answers every request.
    /// Returns the tags answered, in order.
    private static func pipeline(_ pair: InMemoryHTTP2Pair, total: UInt64, answer: Bool = true) throws {
        let block = try APNSLikeTraffic.block()
        var fields = HTTP2HeaderFieldList()
        var next: UInt64 = 1
        pair.beforeStep = { [unowned pair] in
            while next <= total, pair.client.availableStreamSlots > 0 {
                APNSLikeTraffic.fill(&fields, tag: next)
                _ = try? pair.client.submitRequest(
                    block: block, fields: fields, body: APNSLikeTraffic.payload, tag: next)
                next += 1
            }
        }
        if answer {
            pair.onServerEvent = { [unowned pair] event in
                if case .request(let request) = event { try? APNSLikeTraffic.answer(request, on: pair.server) }
            }
        }
    }

    @Test(
        "2000 pipelined requests while the server raises its limit from 1 to 1000: never over the limit, each answered once"
    )
    func raiseFromOne() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 1), chunkSize: 16 << 10)
        try Self.pipeline(pair, total: 2000)
        var peak = 0
        var violations = 0
        pair.afterServerReceive = { [unowned pair] in
            peak = max(peak, pair.server.openStreamCount)
            if pair.server.openStreamCount > pair.server.announcedMaxConcurrentStreams { violations += 1 }
        }
        // The client's own accounting never lets it start more than it knows the server allows.
        var clientOverLimit = 0
        let submit = pair.beforeStep
        pair.beforeStep = { [unowned pair] in
            submit()
            if pair.client.openStreamCount > pair.client.streamSlots.limit { clientOverLimit += 1 }
        }
        var raised = false
        let answerAndRaise = pair.onServerEvent
        pair.onServerEvent = { [unowned pair] event in
            if case .request = event, !raised {
                raised = true  // the mock raises after the first request with a valid token
                try? pair.server.setMaxConcurrentStreams(1000)
            }
            answerAndRaise(event)
        }
        pair.interact()

        #expect(violations == 0)
        #expect(clientOverLimit == 0)
        #expect(peak > 1, "the raised limit was used")
        #expect(peak <= 1000)
        let tags = pair.terminalTags
        #expect(tags.count == 2000)
        #expect(Set(tags) == Set(1...2000))
        for record in pair.clientRecords {
            if case .response(let tag, _, let status, let apnsID, _, _) = record {
                #expect(status == 200)
                #expect(apnsID == APNSLikeTraffic.apnsID(for: tag))
            } else if case .failed = record {
                Issue.record("unexpected failure \(record)")
            } else if case .connectionError = record {
                Issue.record("unexpected connection error \(record)")
            }
        }
        let limits = pair.clientRecords.compactMap {
            if case .limit(let limit) = $0 { return limit } else { return nil }
        }
        #expect(limits == [1, 1000])  // the first SETTINGS (1) is reported though it equals the assumed limit
        #expect(pair.client.openStreamCount == 0)
        #expect(pair.client.streamSlots.limit == 1000)
    }

    @Test("a limit lowered mid-connection holds new streams back until enough have closed")
    func lowered() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 100))
        try Self.pipeline(pair, total: 300, answer: false)
        pair.interact()
        // 100 requests are open on the server, unanswered.
        #expect(pair.server.openStreamCount == 100)
        #expect(pair.client.availableStreamSlots == 0)

        try pair.server.setMaxConcurrentStreams(10)
        var acknowledged = false
        var newStreamsOverLimit = 0
        var pending = pair.serverRequests.map(\.streamID)
        pair.onServerEvent = { [unowned pair] event in
            switch event {
            case .settingsAcknowledged:
                acknowledged = true
            case .request(let request):
                pending.append(request.streamID)
                // A stream the client opened after applying the new limit: at most 10 may be open now.
                if acknowledged, pair.server.openStreamCount > 10 { newStreamsOverLimit += 1 }
            default:
                break
            }
        }
        pair.interact()
        #expect(acknowledged)
        #expect(pair.clientRecords.last == .limit(10))
        #expect(pair.client.availableStreamSlots == 0)
        #expect(pending.count == 100)

        // Answer a few at a time: the client refills only once fewer than 10 are open.
        var answered = 0
        while !pending.isEmpty {
            let batch = pending.prefix(7)
            pending.removeFirst(batch.count)
            for streamID in batch { try pair.server.respond(to: streamID, status: 200) }
            answered += batch.count
            pair.interact()
            #expect(pair.client.openStreamCount <= max(10, 100 - answered))
        }
        #expect(answered == 300)
        #expect(newStreamsOverLimit == 0)
        #expect(Set(pair.terminalTags) == Set(1...300))
        #expect(pair.terminalTags.count == 300)
        #expect(!pair.clientRecords.contains { if case .failed = $0 { return true } else { return false } })
        #expect(!pair.clientRecords.contains { if case .connectionError = $0 { return true } else { return false } })
    }

    @Test("RST_STREAM REFUSED_STREAM is reported as refused and safe to resend")
    func refusedByServer() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 100))
        pair.interact()
        var fields = HTTP2HeaderFieldList()
        for tag in UInt64(1)...3 {
            APNSLikeTraffic.fill(&fields, tag: tag)
            try pair.client.submitRequest(
                block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: tag)
        }
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            if request.streamID == 3 {
                try? pair.server.resetStream(request.streamID, errorCode: .refusedStream)
            } else if request.streamID == 5 {
                try? pair.server.resetStream(request.streamID, errorCode: .internalError)
            } else {
                try? APNSLikeTraffic.answer(request, on: pair.server)
            }
        }
        pair.interact()
        let failures = pair.clientRecords.compactMap { record -> (UInt64, TransportFailure)? in
            if case .failed(let tag, _, let failure) = record { return (tag, failure) }
            return nil
        }
        #expect(failures.map(\.0) == [2, 3])
        #expect(failures.map(\.1) == [.refusedStream, .streamReset(.internalError)])
        #expect(failures[0].1.isSafeToResend)
        #expect(!failures[1].1.isSafeToResend)
        #expect(pair.terminalTags.sorted() == [1, 2, 3])
        #expect(pair.client.openStreamCount == 0)
    }

    @Test("an optimistic client over the server's first limit gets REFUSED_STREAM, safe to resend; the default waits")
    func optimisticBeforeSettings() throws {
        // Assuming 100 before the server's SETTINGS (nghttp2's own default) sends 5 streams into a limit of 1.
        let optimistic = try InMemoryHTTP2Pair(
            client: HTTP2ClientConfiguration(assumedPeerMaxConcurrentStreams: 100),
            server: HTTP2ServerConfiguration(maxConcurrentStreams: 1))
        try Self.pipeline(optimistic, total: 5)
        optimistic.step()
        let refused = optimistic.clientRecords.filter {
            if case .failed(_, _, .refusedStream) = $0 { return true } else { return false }
        }
        #expect(refused.count == 4)
        #expect(optimistic.serverRequests.count == 1)

        // The default assumes 1 until the server's SETTINGS: nothing is refused.
        let careful = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 1))
        #expect(careful.client.availableStreamSlots == 1)
        #expect(!careful.client.streamSlots.hasReceivedPeerSettings)
        try Self.pipeline(careful, total: 5)
        careful.interact()
        #expect(careful.terminalTags.sorted() == [1, 2, 3, 4, 5])
        #expect(!careful.clientRecords.contains { if case .failed = $0 { return true } else { return false } })
        #expect(careful.client.streamSlots.hasReceivedPeerSettings)
    }

    @Test("submitting without a free slot is refused before it reaches nghttp2")
    func noSlot() throws {
        let pair = try InMemoryHTTP2Pair()
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 1)
        try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: [], tag: 1)
        #expect(pair.client.availableStreamSlots == 0)
        #expect(throws: HTTP2Error.noStreamSlot) {
            try pair.client.submitRequest(block: nil, fields: fields, body: [], tag: 2)
        }
        #expect(pair.client.openStreamCount == 1)
    }
}
