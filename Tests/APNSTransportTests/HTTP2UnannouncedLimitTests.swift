import Testing

@testable import APNSHTTP2

/// A stream limit the server session enforces without a SETTINGS frame (`refuseStreams(over:)`): the mock's
/// initial limit, already on the wire in its rewritten first SETTINGS.
@Suite("HTTP2 server: a stream limit enforced without announcing it")
struct HTTP2UnannouncedLimitTests {
    private static func frames(_ frames: [RawHTTP2Frames.Frame], type: UInt8) -> [RawHTTP2Frames.Frame] {
        frames.filter { $0.type == type }
    }

    @Test("streams over the limit are refused (REFUSED_STREAM), the ones under it served, and no SETTINGS goes out")
    func refusesWithoutSettings() throws {
        let harness = try RawHTTP2ServerHarness()
        let first = harness.send(RawHTTP2Frames.preface + RawHTTP2Frames.settingsAck)
        let announced = Self.frames(first, type: RawHTTP2Frames.FrameType.settings).filter { !$0.isAck }
        #expect(announced.count == 1)

        harness.server.refuseStreams(over: 1)
        let answer = harness.send(
            RawHTTP2Frames.request(streamID: 1) + RawHTTP2Frames.request(streamID: 3)
                + RawHTTP2Frames.request(streamID: 5))
        #expect(harness.requestStreamIDs == [1], "only the stream under the limit reached the owner")
        let resets = Self.frames(answer, type: RawHTTP2Frames.FrameType.rstStream)
        #expect(resets.map(\.streamID) == [3, 5])
        #expect(resets.allSatisfy { $0.errorCode == .refusedStream })
        #expect(Self.frames(answer, type: RawHTTP2Frames.FrameType.settings).isEmpty, "no second SETTINGS")
        #expect(harness.server.announcedMaxConcurrentStreams == 1)

        // Once stream 1 is answered and closed, the next stream is under the limit again.
        try harness.server.respond(to: 1, status: 200)
        harness.collect()
        harness.send(RawHTTP2Frames.request(streamID: 7))
        #expect(harness.requestStreamIDs == [1, 7])
    }

    @Test("an announced limit ends the unannounced one: its SETTINGS goes out and nghttp2's limit holds again")
    func announcedLimitTakesOver() throws {
        let harness = try RawHTTP2ServerHarness()
        harness.send(RawHTTP2Frames.preface + RawHTTP2Frames.settingsAck)
        harness.server.refuseStreams(over: 1)
        try harness.server.setMaxConcurrentStreams(10)
        let raised = harness.collect()
        #expect(Self.frames(raised, type: RawHTTP2Frames.FrameType.settings).compactMap(\.maxConcurrentStreams) == [10])
        harness.send(RawHTTP2Frames.settingsAck)
        harness.send((0..<3).flatMap { RawHTTP2Frames.request(streamID: Int32(2 * $0 + 1)) })
        #expect(harness.requestStreamIDs == [1, 3, 5])
    }
}
