import Testing
@testable import APNSTransport

@Suite("HTTP2 sessions: GOAWAY, broken connections, garbage")
struct HTTP2GoawayTests {
    /// A pair with a limit of 100 and `count` requests in flight (tags 1…count on streams 1, 3, 5…), unanswered.
    private static func pairWithStreamsInFlight(_ count: UInt64) throws -> InMemoryHTTP2Pair {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 100))
        pair.interact()
        let block = try APNSLikeTraffic.block()
        var fields = HTTP2HeaderFieldList()
        for tag in 1...count {
            APNSLikeTraffic.fill(&fields, tag: tag)
            try pair.client.submitRequest(block: block, fields: fields, body: APNSLikeTraffic.payload, tag: tag)
        }
        pair.interact()
        return pair
    }

    @Test("GOAWAY in the middle: above last-stream-id unprocessed, at or below unanswered in doubt, answered answered")
    func goawayClassification() throws {
        let pair = try Self.pairWithStreamsInFlight(10)  // streams 1, 3, …, 19
        #expect(pair.server.openStreamCount == 10)
        try pair.server.respond(to: 1, status: 200)
        try pair.server.respond(to: 3, status: 200)
        let shutdown = Array(#"{"reason":"Shutdown"}"#.utf8)
        try pair.server.sendGoaway(lastStreamID: 9, errorCode: .noError, debugData: shutdown)
        pair.interact()

        let goaways = pair.clientRecords.filter { if case .goaway = $0 { return true } else { return false } }
        #expect(goaways == [.goaway(lastStreamID: 9, errorCode: .noError, debugData: shutdown, unprocessed: [6, 7, 8, 9, 10], inDoubt: [3, 4, 5])])
        #expect(pair.client.availableStreamSlots == 0)
        #expect(throws: HTTP2Error.sessionClosing) {
            try pair.client.submitRequest(block: nil, fields: HTTP2HeaderFieldList(), body: [], tag: 99)
        }
        // The in-doubt streams may still be answered (graceful GOAWAY): answer one, then the connection drops.
        try pair.server.respond(to: 5, status: 200)
        pair.interact()
        pair.client.connectionClosed()
        pair.drainClient()
        #expect(pair.client.isClosed)

        var outcome: [UInt64: String] = [:]
        for record in pair.clientRecords {
            switch record {
            case .response(let tag, _, let status, _, _, _): outcome[tag] = outcome[tag] == nil ? "answered \(status)" : "twice"
            case .failed(let tag, _, let failure): outcome[tag] = outcome[tag] == nil ? "\(failure.isSafeToResend ? "safe" : "doubt") \(failure)" : "twice"
            default: break
            }
        }
        #expect(outcome[1] == "answered 200")
        #expect(outcome[2] == "answered 200")
        #expect(outcome[3] == "answered 200")
        for tag in UInt64(4)...5 { #expect(outcome[tag] == "doubt \(HTTP2StreamFailure.connectionClosed)") }
        for tag in UInt64(6)...10 { #expect(outcome[tag] == "safe \(HTTP2StreamFailure.unprocessedAfterGoaway)") }
        #expect(pair.terminalTags.count == 10)
        #expect(pair.client.openStreamCount == 0)
    }

    @Test("the GOAWAY's debug data is surfaced and parsed as an APNs reason")
    func goawayReason() throws {
        let pair = try Self.pairWithStreamsInFlight(2)
        var reasons: [String?] = []
        pair.onClientEvent = { event in
            if case .goawayReceived(let goaway) = event { reasons.append(goaway.reason?.description) }
        }
        try pair.server.sendGoaway(errorCode: .internalError, debugData: Array(#"{"reason":"Shutdown"}"#.utf8), closeAfterSending: true)
        pair.interact()
        #expect(reasons == ["Shutdown"])
        #expect(pair.server.isClosed)
        // Both streams were at or below the last processed stream (3): in doubt until the connection ends.
        #expect(pair.clientRecords.contains(.goaway(
            lastStreamID: 3, errorCode: .internalError, debugData: Array(#"{"reason":"Shutdown"}"#.utf8), unprocessed: [],
            inDoubt: [1, 2])))
        #expect(!pair.clientRecords.contains { if case .connectionError = $0 { return true } else { return false } })
        pair.client.connectionClosed()
        pair.drainClient()
        #expect(pair.clientRecords.suffix(2) == [
            .failed(tag: 1, streamID: 1, failure: .connectionClosed), .failed(tag: 2, streamID: 3, failure: .connectionClosed),
        ])
    }

    @Test("requests never sent when the connection ends are safe; sent ones are in doubt")
    func connectionClosedClassification() throws {
        let pair = try Self.pairWithStreamsInFlight(2)
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 3)
        try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: 3)
        pair.client.connectionClosed()  // tag 3's HEADERS never left the session
        pair.drainClient()
        #expect(pair.clientRecords.suffix(3) == [
            .failed(tag: 1, streamID: 1, failure: .connectionClosed), .failed(tag: 2, streamID: 3, failure: .connectionClosed),
            .failed(tag: 3, streamID: 5, failure: .notSent),
        ])
        #expect(HTTP2StreamFailure.notSent.isSafeToResend)
        #expect(!HTTP2StreamFailure.connectionClosed.isSafeToResend)
        #expect(pair.client.openStreamCount == 0)
        #expect(!pair.client.wantsRead && !pair.client.wantsWrite)
        var output: [UInt8] = []
        #expect(pair.client.produceOutput(into: &output) == 0)
    }

    @Test("terminate sends GOAWAY, then closes and reports what was open")
    func terminate() throws {
        let pair = try Self.pairWithStreamsInFlight(1)
        pair.client.terminate(errorCode: .noError, debugData: Array("bye".utf8))
        #expect(pair.client.availableStreamSlots == 0)
        pair.interact()
        #expect(pair.client.isClosed)
        #expect(pair.clientRecords.last == .failed(tag: 1, streamID: 1, failure: .connectionClosed))
        let goaways = pair.serverEvents.compactMap { event -> [UInt8]? in
            if case .goawayReceived(_, let code, let debug) = event, code == .noError { return debug }
            return nil
        }
        #expect(goaways == [Array("bye".utf8)])
        #expect(!pair.clientRecords.contains { if case .connectionError = $0 { return true } else { return false } })
    }

    @Test("garbage into a fresh client: connection error, GOAWAY PROTOCOL_ERROR, no crash")
    func garbageIntoClient() throws {
        let client = try HTTP2ClientSession()
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 1)
        try client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: 1)
        var output: [UInt8] = []
        client.produceOutput(into: &output)
        client.receive(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
        client.produceOutput(into: &output)
        let records = client.takeEvents().map(ClientRecord.init)
        #expect(client.isClosed)
        guard case .connectionError(let error)? = records.first else {
            Issue.record("expected a connection error first: \(records)")
            return
        }
        #expect(error.goawayErrorCode == .protocolError)
        #expect(records.dropFirst().elementsEqual([.failed(tag: 1, streamID: 1, failure: .connectionClosed)]))

        // What the client wrote is a valid HTTP/2 stream ending in GOAWAY(PROTOCOL_ERROR).
        let server = try HTTP2ServerSession()
        server.receive(output)
        let codes = server.takeEvents().compactMap { event -> HTTP2ErrorCode? in
            if case .goawayReceived(_, let code, _) = event { return code }
            return nil
        }
        #expect(codes == [.protocolError])
    }

    @Test("a frame header too long for the connection: connection error, every open stream failed once", arguments: 0..<20)
    func oversizedFrame(seed: UInt64) throws {
        let pair = try Self.pairWithStreamsInFlight(3)
        var generator = SplitMix(seed: seed)
        var garbage = (0..<(9 + Int(generator.next() % 300))).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        garbage[0] = 0xFF  // a length beyond SETTINGS_MAX_FRAME_SIZE: FRAME_SIZE_ERROR whatever follows
        pair.client.receive(garbage)
        var output: [UInt8] = []
        pair.client.produceOutput(into: &output)
        pair.drainClient()
        #expect(pair.client.isClosed)
        let errors = pair.clientRecords.compactMap { if case .connectionError(let error) = $0 { return error } else { return nil } }
        #expect(errors.map(\.goawayErrorCode) == [.frameSizeError])
        #expect(pair.terminalTags.sorted() == [1, 2, 3])
    }

    @Test("random bytes after the handshake never crash; each tag is reported exactly once", arguments: 0..<60)
    func randomGarbage(seed: UInt64) throws {
        let pair = try Self.pairWithStreamsInFlight(3)
        try pair.server.respond(to: 1, status: 200)
        pair.interact()
        var generator = SplitMix(seed: seed)
        let garbage = (0..<Int(generator.next() % 400)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        pair.client.receive(garbage)
        var output: [UInt8] = []
        pair.client.produceOutput(into: &output)
        pair.client.connectionClosed()  // whatever the bytes did, the peer is gone now
        pair.drainClient()
        let errors = pair.clientRecords.filter { if case .connectionError = $0 { return true } else { return false } }
        #expect(errors.count <= 1)
        #expect(pair.terminalTags.sorted() == [1, 2, 3])
        #expect(pair.client.openStreamCount == 0)
    }

    @Test("bytes that are not a client preface fail the server session")
    func garbageIntoServer() throws {
        let server = try HTTP2ServerSession()
        server.receive(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let events = server.takeEvents()
        #expect(server.isClosed)
        guard case .connectionError(let error)? = events.first else {
            Issue.record("expected a connection error: \(events)")
            return
        }
        #expect(error.libraryCode != nil)
        #expect(!error.description.isEmpty)
    }
}

/// A small deterministic generator for test inputs.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
