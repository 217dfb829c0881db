import APNSCore
import Testing

@testable import APNSHTTP2
@testable import APNSTransport

@Suite("HTTP2 sessions: GOAWAY")
struct HTTP2GoawayTests {
    /// A pair with a limit of 100 and `count` requests in flight (tags 1…count on streams 1, 3, 5…), unanswered.
    static func pairWithStreamsInFlight(_ count: UInt64) throws -> InMemoryHTTP2Pair {
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
        #expect(
            goaways == [
                .goaway(
                    lastStreamID: 9, errorCode: .noError, debugData: shutdown, unprocessed: [6, 7, 8, 9, 10],
                    inDoubt: [3, 4, 5])
            ])
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
            case .response(let tag, _, let status, _, _, _):
                outcome[tag] = outcome[tag] == nil ? "answered \(status)" : "twice"
            case .failed(let tag, _, let failure):
                outcome[tag] = outcome[tag] == nil ? "\(failure.isSafeToResend ? "safe" : "doubt") \(failure)" : "twice"
            default: break
            }
        }
        #expect(outcome[1] == "answered 200")
        #expect(outcome[2] == "answered 200")
        #expect(outcome[3] == "answered 200")
        for tag in UInt64(4)...5 { #expect(outcome[tag] == "doubt \(TransportFailure.connectionEndedBeforeAnswer)") }
        for tag in UInt64(6)...10 { #expect(outcome[tag] == "safe \(TransportFailure.unprocessedAfterGoaway)") }
        #expect(pair.terminalTags.count == 10)
        #expect(pair.client.openStreamCount == 0)
    }

    @Test(
        "requests still queued in the client when GOAWAY arrives are unprocessed, never sent",
        arguments: [nil, Int32.max] as [Int32?])
    func queuedAtGoaway(lastStreamID: Int32?) throws {
        let pair = try Self.pairWithStreamsInFlight(2)  // streams 1 and 3 on the server
        try pair.server.sendGoaway(lastStreamID: lastStreamID, errorCode: .noError)  // 3, or a shutdown notice
        var fields = HTTP2HeaderFieldList()
        for tag in UInt64(3)...4 {
            APNSLikeTraffic.fill(&fields, tag: tag)
            try pair.client.submitRequest(
                block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: tag)
        }
        pair.flushServerToClient()  // the GOAWAY reaches the client before tags 3 and 4 are written
        #expect(
            pair.clientRecords.contains(
                .goaway(
                    lastStreamID: lastStreamID ?? 3, errorCode: .noError, debugData: [], unprocessed: [3, 4],
                    inDoubt: [1, 2])))
        pair.interact()
        #expect(
            pair.clientRecords.suffix(2) == [
                .failed(tag: 3, streamID: 5, failure: .unprocessedAfterGoaway),
                .failed(tag: 4, streamID: 7, failure: .unprocessedAfterGoaway),
            ])
        #expect(pair.serverRequests.count == 2)  // the server never saw them
        #expect(pair.client.openStreamCount == 2)
    }

    @Test("a graceful GOAWAY lets the streams below it finish, then both sides close")
    func gracefulGoaway() throws {
        let pair = try Self.pairWithStreamsInFlight(4)  // streams 1, 3, 5, 7
        try pair.server.sendGoaway(
            lastStreamID: nil, errorCode: .noError, debugData: Array(#"{"reason":"Shutdown"}"#.utf8))
        pair.interact()
        #expect(!pair.client.isClosed && !pair.server.isClosed)
        #expect(pair.client.availableStreamSlots == 0)
        #expect(!pair.client.acceptsNewStreams)
        for streamID in [1, 3, 5, 7] as [Int32] { try pair.server.respond(to: streamID, status: 200) }
        pair.interact()
        #expect(pair.terminalTags.sorted() == [1, 2, 3, 4])
        #expect(!pair.clientRecords.contains { if case .failed = $0 { return true } else { return false } })
        #expect(pair.client.isClosed)
        #expect(pair.server.isClosed)
        #expect(!pair.client.wantsRead && !pair.client.wantsWrite)
    }

    @Test("the end of the stream-id space stops new streams: the pool must open another connection")
    func streamIDsExhausted() throws {
        // lastStreamID at the very end, so nghttp2's own limit is what stops the session here.
        let pair = try InMemoryHTTP2Pair(
            client: HTTP2ClientConfiguration(lastStreamID: Int32.max),
            server: HTTP2ServerConfiguration(maxConcurrentStreams: 100))
        pair.interact()
        #expect(pair.client.nghttp2.setNextStreamID(Int32.max))
        #expect(pair.client.acceptsNewStreams)
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: 1)
        let last = try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: [], tag: 1)
        #expect(last == Int32.max)
        #expect(!pair.client.acceptsNewStreams)
        #expect(pair.client.availableStreamSlots == 0)
        #expect(throws: HTTP2Error.sessionClosing) {
            try pair.client.submitRequest(block: try APNSLikeTraffic.block(), fields: fields, body: [], tag: 2)
        }
        pair.onServerEvent = { [unowned pair] event in
            if case .request(let request) = event { try? APNSLikeTraffic.answer(request, on: pair.server) }
        }
        pair.interact()
        #expect(pair.terminalTags == [1])
    }

    @Test("the GOAWAY's debug data is surfaced and parsed as an APNs reason")
    func goawayReason() throws {
        let pair = try Self.pairWithStreamsInFlight(2)
        var reasons: [String?] = []
        pair.onClientEvent = { event in
            if case .goawayReceived(let goaway) = event { reasons.append(goaway.reason?.description) }
        }
        try pair.server.sendGoaway(
            errorCode: .internalError, debugData: Array(#"{"reason":"Shutdown"}"#.utf8), closeAfterSending: true)
        pair.interact()
        #expect(reasons == ["Shutdown"])
        #expect(pair.server.isClosed)
        // Both streams were at or below the last processed stream (3): in doubt until the connection ends.
        #expect(
            pair.clientRecords.contains(
                .goaway(
                    lastStreamID: 3, errorCode: .internalError, debugData: Array(#"{"reason":"Shutdown"}"#.utf8),
                    unprocessed: [],
                    inDoubt: [1, 2])))
        #expect(!pair.clientRecords.contains { if case .connectionError = $0 { return true } else { return false } })
        pair.client.connectionClosed()
        pair.drainClient()
        #expect(
            pair.clientRecords.suffix(2) == [
                .failed(tag: 1, streamID: 1, failure: .connectionEndedBeforeAnswer),
                .failed(tag: 2, streamID: 3, failure: .connectionEndedBeforeAnswer),
            ])
    }

    @Test("terminate sends GOAWAY, then closes and reports what was open")
    func terminate() throws {
        let pair = try Self.pairWithStreamsInFlight(1)
        pair.client.terminate(errorCode: .noError, debugData: Array("bye".utf8))
        #expect(pair.client.availableStreamSlots == 0)
        pair.interact()
        #expect(pair.client.isClosed)
        #expect(pair.clientRecords.last == .failed(tag: 1, streamID: 1, failure: .connectionEndedBeforeAnswer))
        let goaways = pair.serverEvents.compactMap { event -> [UInt8]? in
            if case .goawayReceived(_, let code, let debug) = event, code == .noError { return debug }
            return nil
        }
        #expect(goaways == [Array("bye".utf8)])
        #expect(!pair.clientRecords.contains { if case .connectionError = $0 { return true } else { return false } })
    }
}
