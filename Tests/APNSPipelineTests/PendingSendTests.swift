import APNSCore
import Testing

@testable import APNSPipeline

/// `PendingSend`: its compact fields read back as the answers and failures left them, and it stays small enough
/// to move without a `memcpy` call.
@Suite("Pending send")
struct PendingSendTests {
    private func send() throws -> PendingSend {
        guard case .notification(let notification) = Fixture.record(1, token: Fixture.token(1)).content else {
            throw PendingSendTestError.fixture
        }
        return PendingSend(key: RecordKey(fileIndex: 0, line: 1), notification: notification)
    }

    @Test("before any answer: no status, reason or detail, no attempts")
    func fresh() throws {
        let send = try send()
        #expect(send.lastStatus == nil && send.lastReason == nil && send.lastDetail == nil)
        #expect(send.attempts == 0 && send.unprocessed == 0)
    }

    @Test(
        "an answer keeps its status and reason; a failure after it keeps only its detail; an answer after that clears the detail"
    )
    func lastOutcome() throws {
        var send = try send()
        send.recordAnswer(status: 429, reason: "TooManyRequests")
        #expect(send.lastStatus == 429 && send.lastReason == "TooManyRequests" && send.lastDetail == nil)
        send.recordFailure(detail: "connection lost before the answer")
        #expect(
            send.lastStatus == nil && send.lastReason == nil && send.lastDetail == "connection lost before the answer")
        send.recordAnswer(status: 503, reason: nil)
        #expect(send.lastStatus == 503 && send.lastReason == nil && send.lastDetail == nil)
        let result = send.finalResult(.retryable, detail: "gave up after 3 attempts")
        #expect(result.status == 503 && result.reason == nil && result.detail == "gave up after 3 attempts")
    }

    @Test("counters hold what they are given, and saturate rather than wrap")
    func counters() throws {
        var send = try send()
        send.attempts = 7
        send.unprocessed += 3
        #expect(send.attempts == 7 && send.unprocessed == 3)
        send.attempts = Int(UInt32.max) + 10
        #expect(send.attempts == Int(UInt32.max))
        send.unprocessed = -1
        #expect(send.unprocessed == 0)
    }

    @Test("ended without an answer: not sent while no request reached the server, retryable once one did")
    func outcomeWithoutAnswer() throws {
        var send = try send()
        send.unprocessed = 3  // refused or above a GOAWAY: never processed, so never on the server
        #expect(send.outcomeWithoutAnswer(stoppedBy: nil) == .notSent)
        send.attempts = 1
        #expect(send.outcomeWithoutAnswer(stoppedBy: nil) == .retryable)
    }

    @Test("it fits in 128 bytes, the largest value Swift moves without calling memcpy")
    func size() {
        #expect(MemoryLayout<PendingSend>.size <= 128, "\(MemoryLayout<PendingSend>.size) bytes")
        #expect(MemoryLayout<PendingSend?>.size <= 128, "\(MemoryLayout<PendingSend?>.size) bytes as an optional")
    }
}

private enum PendingSendTestError: Error { case fixture }
