import Testing

@testable import APNSHTTP2

/// RFC 9113 section 5.1: frames on closed streams and stream ids out of order, sent raw.
@Suite("HTTP2 server: frames on closed streams, stream ids out of order (RFC 9113 5.1)")
struct HTTP2ClosedStreamTests {
    typealias Frames = RawHTTP2Frames

    private static func started() throws -> RawHTTP2ServerHarness {
        let harness = try RawHTTP2ServerHarness()
        harness.send(Frames.preface + Frames.settingsAck)
        return harness
    }

    private static func resets(_ frames: [Frames.Frame]) -> [String] {
        frames.filter { $0.type == Frames.FrameType.rstStream }.map {
            "\($0.streamID) \($0.errorCode.map(String.init(describing:)) ?? "?")"
        }
    }

    @Test("DATA on a stream the client reset: RST_STREAM STREAM_CLOSED; the connection goes on")
    func dataAfterReset() throws {
        let harness = try Self.started()
        let frames = harness.send(
            Frames.request(streamID: 1, endStream: false) + Frames.reset(streamID: 1)
                + Frames.data(streamID: 1, [1, 2, 3]))
        #expect(Self.resets(frames) == ["1 STREAM_CLOSED"])
        #expect(harness.goaways.isEmpty)
        harness.send(Frames.request(streamID: 3))
        #expect(harness.requestStreamIDs == [3], "the next stream is served")
    }

    @Test("HEADERS on a stream the client reset: RST_STREAM STREAM_CLOSED, and the header block still decoded")
    func headersAfterReset() throws {
        let harness = try Self.started()
        harness.send(Frames.request(streamID: 1, endStream: false) + Frames.reset(streamID: 1))
        let frames = harness.send(
            Frames.headers(streamID: 1, endStream: true, fields: [("x-trailer", "1")]) + Frames.request(streamID: 3))
        #expect(Self.resets(frames) == ["1 STREAM_CLOSED"])
        #expect(harness.goaways.isEmpty)
        #expect(harness.requestStreamIDs == [3])
    }

    @Test(
        "DATA or HEADERS on a stream closed after the client's END_STREAM and the answer: connection error STREAM_CLOSED",
        arguments: [false, true])
    func frameOnClosedStream(headers: Bool) throws {
        let harness = try Self.started()
        harness.send(Frames.request(streamID: 1))
        try harness.server.respond(to: 1, status: 200)
        harness.collect()
        let late =
            headers
            ? Frames.headers(streamID: 1, endStream: true, fields: [("x-late", "1")]) : Frames.data(streamID: 1, [7])
        harness.send(late + Frames.request(streamID: 3))
        #expect(harness.goaways.map(\.errorCode) == [.streamClosed])
        #expect(harness.connectionErrors.map(\.goawayErrorCode) == [.streamClosed])
        #expect(harness.requestStreamIDs == [1], "nothing after the violation is read")
    }

    @Test("DATA after END_STREAM on a stream not answered yet: STREAM_CLOSED")
    func dataOnHalfClosedStream() throws {
        let harness = try Self.started()
        harness.send(Frames.request(streamID: 1) + Frames.data(streamID: 1, [7]))
        let codes = harness.frames.filter {
            $0.type == Frames.FrameType.goaway || $0.type == Frames.FrameType.rstStream
        }.map(\.errorCode)
        #expect(codes == [.streamClosed])
    }

    @Test("a new stream id lower than an earlier one: connection error PROTOCOL_ERROR, the request not served")
    func lowerStreamID() throws {
        let harness = try Self.started()
        harness.send(Frames.request(streamID: 5))
        harness.send(Frames.request(streamID: 3))
        #expect(harness.goaways.map(\.errorCode) == [.protocolError])
        #expect(harness.requestStreamIDs == [5])
        #expect(harness.connectionErrors.map(\.goawayErrorCode) == [.protocolError])
    }

    @Test("split anywhere, the input is checked the same: frame headers across reads")
    func splitInput() throws {
        let bytes =
            Frames.preface + Frames.settingsAck + Frames.request(streamID: 1, endStream: false)
            + Frames.reset(streamID: 1)
            + Frames.data(streamID: 1, [1, 2, 3]) + Frames.request(streamID: 3)
        for split in stride(from: 1, to: bytes.count, by: 7) {
            let harness = try RawHTTP2ServerHarness()
            harness.send(Array(bytes[..<split]))
            harness.send(Array(bytes[split...]))
            #expect(Self.resets(harness.frames) == ["1 STREAM_CLOSED"], "split at \(split)")
            #expect(harness.requestStreamIDs == [3], "split at \(split)")
        }
    }
}
