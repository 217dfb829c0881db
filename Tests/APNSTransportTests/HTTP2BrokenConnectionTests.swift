import APNSCore
import Testing

@testable import APNSHTTP2
@testable import APNSTransport

@Suite("HTTP2 sessions: broken connections and garbage")
struct HTTP2BrokenConnectionTests {
    @Test("requests never sent when the connection ends are safe; sent ones are in doubt")
    func connectionClosedClassification() throws {
        let pair = try HTTP2GoawayTests.pairWithStreamsInFlight(2)
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 3)
        try pair.client.submitRequest(
            block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: 3)
        pair.client.connectionClosed()  // tag 3's HEADERS never left the session
        pair.drainClient()
        #expect(
            pair.clientRecords.suffix(3) == [
                .failed(tag: 1, streamID: 1, failure: .connectionEndedBeforeAnswer),
                .failed(tag: 2, streamID: 3, failure: .connectionEndedBeforeAnswer),
                .failed(tag: 3, streamID: 5, failure: .connectionEndedBeforeSending),
            ])
        #expect(TransportFailure.connectionEndedBeforeSending.isSafeToResend)
        #expect(!TransportFailure.connectionEndedBeforeAnswer.isSafeToResend)
        #expect(pair.client.openStreamCount == 0)
        #expect(!pair.client.wantsRead && !pair.client.wantsWrite)
        var output: [UInt8] = []
        #expect(pair.client.produceOutput(into: &output) == 0)
    }

    @Test("a handler that closes the connection mid-drain: its bytes stay intact, the new events follow in order")
    func closeInsideDrain() throws {
        let pair = try HTTP2GoawayTests.pairWithStreamsInFlight(3)
        try pair.server.respond(to: 1, status: 400, body: Array(#"{"reason":"BadTopic"}"#.utf8))
        var bodiesSeen: [String] = []
        pair.onClientEvent = { [unowned pair] event in
            guard case .response(let response) = event else { return }
            let before = String(decoding: response.body, as: UTF8.self)
            pair.client.connectionClosed()  // records two failures while this response is being read
            bodiesSeen.append(before + "|" + String(decoding: response.body, as: UTF8.self))
        }
        pair.interact()
        #expect(bodiesSeen == [#"{"reason":"BadTopic"}|{"reason":"BadTopic"}"#])
        #expect(
            pair.clientRecords == [
                .limit(100),
                .response(
                    tag: 1, streamID: 1, status: 400, apnsID: nil, apnsUniqueID: nil,
                    body: Array(#"{"reason":"BadTopic"}"#.utf8)),
                .failed(tag: 2, streamID: 3, failure: .connectionEndedBeforeAnswer),
                .failed(tag: 3, streamID: 5, failure: .connectionEndedBeforeAnswer),
            ])
        #expect(!pair.client.hasEvents)
    }

    @Test("garbage into a fresh client: connection error, GOAWAY PROTOCOL_ERROR, no crash")
    func garbageIntoClient() throws {
        let client = try HTTP2ClientSession()
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 1)
        try client.submitRequest(
            block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: 1)
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
        // No HTTP/2 SETTINGS ever came from that peer: it cannot have processed the request.
        #expect(
            records.dropFirst().elementsEqual([.failed(tag: 1, streamID: 1, failure: .connectionEndedBeforeSending)]))

        // What the client wrote is a valid HTTP/2 stream ending in GOAWAY(PROTOCOL_ERROR).
        let server = try HTTP2ServerSession()
        server.receive(output)
        let codes = server.takeEvents().compactMap { event -> HTTP2ErrorCode? in
            if case .goawayReceived(_, let code, _) = event { return code }
            return nil
        }
        #expect(codes == [.protocolError])
    }

    @Test(
        "a frame header too long for the connection: connection error, every open stream failed once", arguments: 0..<20
    )
    func oversizedFrame(seed: UInt64) throws {
        let pair = try HTTP2GoawayTests.pairWithStreamsInFlight(3)
        var generator = SplitMix64(seed: seed)
        var garbage = (0..<(9 + Int(generator.next() % 300))).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        garbage[0] = 0xFF  // a length beyond SETTINGS_MAX_FRAME_SIZE: FRAME_SIZE_ERROR whatever follows
        pair.client.receive(garbage)
        var output: [UInt8] = []
        pair.client.produceOutput(into: &output)
        pair.drainClient()
        #expect(pair.client.isClosed)
        let errors = pair.clientRecords.compactMap {
            if case .connectionError(let error) = $0 { return error } else { return nil }
        }
        #expect(errors.map(\.goawayErrorCode) == [.frameSizeError])
        #expect(pair.terminalTags.sorted() == [1, 2, 3])
    }

    @Test("random bytes after the handshake never crash; each tag is reported exactly once", arguments: 0..<60)
    func randomGarbage(seed: UInt64) throws {
        let pair = try HTTP2GoawayTests.pairWithStreamsInFlight(3)
        try pair.server.respond(to: 1, status: 200)
        pair.interact()
        var generator = SplitMix64(seed: seed)
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
