import Testing

@testable import APNSTransport

/// The rule that keeps a pause of the process (SIGSTOP, a frozen container) out of the loop's clock, on readings
/// given by hand: no clock, no I/O.
@Suite("EventLoopPauseDetector")
struct EventLoopPauseDetectorTests {
    private let start = EventLoopInstant(nanoseconds: 1_000_000_000_000)

    private func at(_ seconds: Double) -> EventLoopInstant { start.advanced(bySeconds: seconds) }

    @Test("waits and short turns within the allowance leave the clock as it is")
    func noPause() {
        var detector = EventLoopPauseDetector()
        #expect(detector.loopTime(at: at(0)) == at(0))
        detector.willWait(seconds: 1)
        #expect(detector.loopTime(at: at(1.002)) == at(1.002))  // the wait, overshot a little
        #expect(detector.loopTime(at: at(1.5)) == at(1.5))  // half a second of work: a busy turn, not a pause
        detector.willWait(seconds: 0.3)
        #expect(detector.loopTime(at: at(3.7)) == at(3.7))  // 1.9 s beyond the wait: under the threshold
        #expect(detector.pauses == 0 && detector.pausedNanoseconds == 0)
    }

    @Test("a gap far beyond the wait is a pause: the clock moves on by the allowed wait only")
    func pauseDuringWait() {
        var detector = EventLoopPauseDetector()
        _ = detector.loopTime(at: at(0))
        detector.willWait(seconds: 1)
        #expect(detector.loopTime(at: at(8.5)) == at(1))
        #expect(detector.pauses == 1)
        #expect(detector.pausedNanoseconds == 7_500_000_000)
        // Later readings keep the offset; time runs normally again.
        detector.willWait(seconds: 1)
        #expect(detector.loopTime(at: at(9.5)) == at(2))
        #expect(detector.pauses == 1)
    }

    @Test("a stop between two readings of one turn (no wait allowed) is a pause too")
    func pauseDuringWork() {
        var detector = EventLoopPauseDetector()
        _ = detector.loopTime(at: at(0))
        #expect(detector.loopTime(at: at(6)) == at(0))
        #expect(detector.pauses == 1)
    }

    @Test("a wait without limit allows any gap: nothing was due to be judged")
    func unlimitedWait() {
        var detector = EventLoopPauseDetector()
        _ = detector.loopTime(at: at(0))
        detector.willWait(seconds: nil)
        #expect(detector.loopTime(at: at(3600)) == at(3600))
        #expect(detector.pauses == 0)
        // The allowance is used up by the reading: the next gap is judged again.
        #expect(detector.loopTime(at: at(3610)) == at(3600))
        #expect(detector.pauses == 1)
    }

    @Test("pauses add up, and the loop's clock never goes back")
    func pausesAddUp() {
        var detector = EventLoopPauseDetector()
        var last = detector.loopTime(at: at(0))
        var raw = 0.0
        for step in [0.2, 9, 0.5, 30, 1, 4] {
            detector.willWait(seconds: 1)
            raw += step
            let time = detector.loopTime(at: at(raw))
            #expect(time >= last)
            last = time
        }
        #expect(detector.pauses == 3)  // 9 s, 30 s and 4 s gaps against a 1 s wait
        #expect(abs(last.seconds(since: at(0.2 + 1 + 0.5 + 1 + 1 + 1))) < 1e-6)
    }

    @Test("a deadline set before a pause is not due on waking: it is re-armed by the pause")
    func deadlineSurvivesPause() {
        var detector = EventLoopPauseDetector()
        let lastAnswer = detector.loopTime(at: at(0))
        let stallDeadline = lastAnswer.advanced(bySeconds: 5)
        detector.willWait(seconds: 1)
        let woke = detector.loopTime(at: at(8))  // stopped for 7 s at the 1st second
        #expect(woke < stallDeadline)
        #expect(stallDeadline.seconds(since: woke) == 4)
    }

    @Test("a clock reading that goes back (it should not) is no pause and no negative time")
    func readingGoesBack() {
        var detector = EventLoopPauseDetector()
        _ = detector.loopTime(at: at(10))
        #expect(detector.loopTime(at: at(5)) == at(5))
        #expect(detector.pauses == 0)
    }
}
