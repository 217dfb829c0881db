import APNSTransport
import Testing

@testable import rtt_relay

@Suite("rtt-relay: one direction's bytes, held until due")
struct DelayedStreamTests {
    private func at(_ milliseconds: UInt64) -> EventLoopInstant {
        EventLoopInstant(nanoseconds: milliseconds * 1_000_000)
    }

    /// Writes everything due, `limit` bytes a write at most; returns what went out.
    private func drain(_ stream: inout DelayedStream, limit: Int = .max) -> [UInt8] {
        var out: [UInt8] = []
        while stream.hasDueBytes {
            let chunk = stream.withDueBytes { span in
                (0..<min(limit, span.byteCount)).map { span.unsafeLoad(fromByteOffset: $0, as: UInt8.self) }
            }
            out += chunk
            stream.consume(chunk.count)
        }
        return out
    }

    @Test("chunks go out when due, in order, the ones due together as one piece; the end only after them")
    func dueInOrder() {
        var stream = DelayedStream()
        stream.append([1, 2, 3][...], due: at(10))
        stream.append([4][...], due: at(12))
        stream.append([5, 6][...], due: at(20))
        stream.appendEnd(due: at(20))
        #expect(stream.nextDue == at(10))
        stream.advance(to: at(9))
        #expect(!stream.hasDueBytes)

        stream.advance(to: at(12))
        #expect(stream.withDueBytes { $0.byteCount } == 4)  // both chunks due by 12 ms: one write
        #expect(drain(&stream, limit: 3) == [1, 2, 3, 4])  // a short write leaves the rest due
        #expect(!stream.isDrained)
        #expect(stream.nextDue == at(20))
        #expect(stream.buffered == 2)

        stream.advance(to: at(25))
        #expect(stream.endDue)
        #expect(!stream.isDrained)  // the end waits for the bytes before it
        #expect(drain(&stream) == [5, 6])
        #expect(stream.isDrained)
        #expect(stream.nextDue == nil)
    }

    @Test("a long stream keeps its order across the buffer's compactions; nothing after the end is taken")
    func longStream() {
        var stream = DelayedStream()
        var expected: [UInt8] = []
        var written: [UInt8] = []
        for step in 0..<400 {
            let chunk = (0..<700).map { UInt8(truncatingIfNeeded: step &* 7 &+ $0) }
            expected += chunk
            stream.append(chunk[...], due: at(UInt64(step)))
            stream.advance(to: at(UInt64(max(0, step - 3))))  // three chunks always held back
            written += drain(&stream, limit: 1000)
        }
        #expect(stream.buffered == expected.count - written.count)
        stream.appendEnd(due: at(500))
        stream.append([9][...], due: at(501))
        stream.advance(to: at(1000))
        written += drain(&stream)
        #expect(written == expected)
        #expect(stream.isDrained)
    }

    @Test("a stream whose sink is gone drops what it holds and counts as done")
    func discard() {
        var stream = DelayedStream()
        stream.append([1, 2][...], due: at(1))
        stream.advance(to: at(1))
        stream.discard()
        #expect(!stream.hasDueBytes)
        #expect(stream.isDrained)
        #expect(stream.buffered == 0)
    }
}
