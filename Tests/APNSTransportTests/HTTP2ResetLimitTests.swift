import Testing

@testable import APNSHTTP2

/// Resets a client sends: those of answered streams are free, those of unanswered ones are rate-limited.
@Suite("HTTP2 server: stream resets and the rapid-reset limit")
struct HTTP2ResetLimitTests {
    @Test("3,000 resets of streams already answered (async-http-client cancels ~2%) keep the connection")
    func resetsOfAnsweredStreams() throws {
        let harness = try RawHTTP2ServerHarness()
        harness.send(RawHTTP2Frames.preface + RawHTTP2Frames.settingsAck)
        var nextStreamID: Int32 = 1
        for _ in 0..<60 {
            var batch: [Int32] = []
            var bytes: [UInt8] = []
            for _ in 0..<50 {
                batch.append(nextStreamID)
                bytes += RawHTTP2Frames.request(streamID: nextStreamID)
                nextStreamID += 2
            }
            harness.send(bytes)
            for streamID in batch { try harness.server.respond(to: streamID, status: 200) }
            harness.collect()
            harness.send(batch.flatMap { RawHTTP2Frames.reset(streamID: $0) })
        }
        #expect(harness.requestStreamIDs.count == 3000, "every request arrived")
        #expect(
            harness.goaways.isEmpty,
            "no GOAWAY: \(harness.goaways.map { $0.errorCode.map(String.init(describing:)) ?? "?" })")
        #expect(harness.connectionErrors.isEmpty, "\(harness.connectionErrors)")
        #expect(!harness.server.isClosed)
        // The connection still serves.
        harness.send(RawHTTP2Frames.request(streamID: nextStreamID))
        try harness.server.respond(to: nextStreamID, status: 200)
        let answer = harness.collect()
        #expect(answer.contains { $0.type == RawHTTP2Frames.FrameType.headers && $0.streamID == nextStreamID })
    }

    @Test("a client that rapidly resets streams before they are answered is cut off: GOAWAY ENHANCE_YOUR_CALM")
    func rapidReset() throws {
        let harness = try RawHTTP2ServerHarness(
            configuration: HTTP2ServerConfiguration(
                maxConcurrentStreams: 100, resetRateLimit: HTTP2ResetRateLimit(burst: 20, perSecond: 1)))
        harness.send(RawHTTP2Frames.preface + RawHTTP2Frames.settingsAck)
        var streamID: Int32 = 1
        for _ in 0..<40 where !harness.server.isClosed {
            harness.send(RawHTTP2Frames.request(streamID: streamID) + RawHTTP2Frames.reset(streamID: streamID))
            streamID += 2
        }
        #expect(harness.goaways.map(\.errorCode) == [.enhanceYourCalm])
        #expect(harness.connectionErrors.map(\.goawayErrorCode) == [.enhanceYourCalm])
        #expect(harness.server.isClosed)
        #expect(streamID == 43, "cut at the 21st reset, not before: \(streamID)")
    }

    @Test("the same limit with nghttp2's defaults: 1,000 rapid resets pass, the next ones end the connection")
    func rapidResetDefaults() throws {
        let harness = try RawHTTP2ServerHarness()
        harness.send(RawHTTP2Frames.preface + RawHTTP2Frames.settingsAck)
        var bytes: [UInt8] = []
        for index in 0..<1100 {
            let streamID = Int32(2 * index + 1)
            bytes += RawHTTP2Frames.request(streamID: streamID) + RawHTTP2Frames.reset(streamID: streamID)
        }
        harness.send(bytes)
        #expect(harness.goaways.map(\.errorCode) == [.enhanceYourCalm])
        #expect(harness.server.isClosed)
    }

    @Test("the bucket: burst at once, then the rate per second, never more than the burst")
    func bucket() {
        var limiter = HTTP2ResetRateLimiter(HTTP2ResetRateLimit(burst: 3, perSecond: 2))
        let times: [Double] = [10, 10, 10, 10, 10.5, 10.5, 100, 100, 100, 100]
        var allowed: [Bool] = []
        for time in times { allowed.append(limiter.allowReset(at: time)) }
        #expect(allowed == [true, true, true, false, true, false, true, true, true, false])
    }
}
