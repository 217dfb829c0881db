import APNSCore
import Testing

@testable import APNSPipeline

/// The dispatcher's machine driven directly, without a reader, sink, transport or loop: events in, actions out.
@Suite("Dispatcher state machine")
struct DispatcherStateMachineTests {
    typealias Machine = DispatcherStateMachine

    /// Starts a pump turn with `freeSlots`, takes records `lines` (each submitted), and returns their tags.
    private func submit(_ machine: inout Machine, lines: ClosedRange<Int>, freeSlots: Int = 4, now: Double = 0)
        -> [UInt64]
    {
        var step = machine.pumpTurnBegan(.pumpTurn, freeSlots: freeSlots, now: now)
        var tags: [UInt64] = []
        for line in lines {
            guard case .readRecord = step.takePumpStep() else {
                Issue.record("line \(line) was not to be read")
                break
            }
            var read = machine.recordRead(
                Fixture.record(line, token: Fixture.token(line)), resume: .fresh, resumedSends: 0, firstOccurrence: true
            )
            let tag = read.submitTag
            guard case .submit(let send) = read.takePumpStep() else {
                Issue.record("line \(line) was not submitted")
                continue
            }
            step = machine.submitted(send, tag: tag, now: now)
            tags.append(tag)
        }
        return tags
    }

    /// The budget of a pump turn begun with `freeSlots` at `now`; nil when none began.
    private func budget(_ machine: inout Machine, freeSlots: Int, now: Double = 0) -> Int? {
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: freeSlots, now: now)
        return machine.turn?.budget.requests
    }

    private func outcomes(_ writes: DispatcherAction.RecordWrites) -> [RecordOutcome] {
        let all: [DispatcherAction.RecordWrite]
        switch writes {
        case .none: all = []
        case .one(let write): all = [write]
        case .many(let writes): all = writes
        }
        return all.compactMap { write in
            if case .finalResult(let line) = write { return line.record.outcome }
            return nil
        }
    }

    private func journaled(_ writes: DispatcherAction.RecordWrites) -> Int {
        switch writes {
        case .none: return 0
        case .one(.journalRetryable): return 1
        case .one(.finalResult): return 0
        case .many(let all):
            return all.filter { if case .journalRetryable = $0 { return true } else { return false } }.count
        }
    }

    @Test("a run to completion: pump, answer, the transport closed once settled, the end reported once")
    func completion() {
        var machine = Machine(configuration: DispatcherConfiguration())
        #expect(machine.start(now: 0).pumpTurn == .nextLoopTurn)
        #expect(budget(&machine, freeSlots: 4) == 4, "the budget is the free slots within the window")
        let tags = submit(&machine, lines: 1...2)
        let exhausted = machine.inputExhausted()
        #expect(exhausted.step == .endTurn && exhausted.flushSink, "the input's end ends the turn, sink flushed")
        let ended = machine.pumpTurnEnded(transportFreeSlots: 2, now: 0)
        #expect(ended.flushTransport)
        #expect(ended.closeTransport == .no, "closed with requests in flight")

        let first = machine.completed(tag: tags[0], outcome: Fixture.ok(), now: 0.1)
        #expect(outcomes(first.writes) == [.delivered])
        #expect(first.pumpTurn == .afterQueuedEvents, "an answer's slot waits a loop turn")
        let second = machine.completed(tag: tags[1], outcome: Fixture.ok(), now: 0.1)
        #expect(outcomes(second.writes) == [.delivered])
        #expect(second.pumpTurn == .none, "a second pump turn asked for while one is scheduled")
        let again = machine.completed(tag: tags[1], outcome: Fixture.ok(), now: 0.1)
        #expect(again.isEmpty, "an answer for a tag no longer in flight did something")

        #expect(machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 0.1).step == .endTurn, "nothing to read")
        let settled = machine.pumpTurnEnded(transportFreeSlots: 4, now: 0.1)
        #expect(settled.closeTransport == .afterFlushingSink)
        #expect(!settled.reportEnd)
        let closed = machine.transportClosed(now: 0.2)
        #expect(closed.reportEnd && closed.flushSink, "the end is reported after the sink's last flush")
        #expect(machine.state == .ended)
        #expect(machine.summary.ending == .completed)
        #expect(machine.summary.latencies.count == 2)
        #expect(machine.transportClosed(now: 0.3).isEmpty, "the end is reported once")
        #expect(machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 0.3).isEmpty, "a pump turn after the end")
    }

    @Test("answers refill their slots after the events queued with them, but a loop turn pumps in a loop never")
    func pumpTurnAfterAnswers() {
        var machine = Machine(configuration: DispatcherConfiguration())
        let tags = submit(&machine, lines: 1...3, now: 1)  // the pump turn at 1
        let sameTurn = machine.completed(tag: tags[0], outcome: Fixture.ok(), now: 1)
        #expect(sameTurn.pumpTurn == .nextLoopTurn, "a second pump in the loop turn that pumped already")
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 2)
        let laterTurn = machine.completed(tag: tags[1], outcome: Fixture.ok(), now: 3)
        #expect(laterTurn.pumpTurn == .afterQueuedEvents)
        #expect(machine.slotsFreed(now: 3).pumpTurn == .none, "asked for twice")
    }

    @Test("the budget is the free slots within the window and the rate; none while the transport closes")
    func budget() {
        var configuration = DispatcherConfiguration()
        configuration.window.maximum = 3
        var machine = Machine(configuration: configuration)
        #expect(budget(&machine, freeSlots: 100) == 3)
        _ = submit(&machine, lines: 1...2, freeSlots: 100)
        #expect(budget(&machine, freeSlots: 100) == 1)
        _ = machine.gracePeriodEnded()
        #expect(budget(&machine, freeSlots: 100) == 0)

        var rated = DispatcherConfiguration()
        rated.ratePerSecond = 10
        var limited = Machine(configuration: rated)
        let first = budget(&limited, freeSlots: 100) ?? 0
        #expect(first >= 1 && first < 100, "the rate limit let \(first) requests through at once")
    }

    @Test("an answer that stops the campaign: its line first, then the stop; waiting sends end as never answered")
    func answerStops() throws {
        var configuration = DispatcherConfiguration()
        configuration.stopAfterConsecutiveFailures = 1
        var machine = Machine(configuration: configuration)
        let tags = submit(&machine, lines: 1...3)
        let retried = machine.completed(tag: tags[0], outcome: Fixture.rejected(429, .tooManyRequests), now: 0.1)
        #expect(journaled(retried.writes) == 1, "a retry is journaled as safe to resend")
        let refused = machine.completed(tag: tags[1], outcome: .failed(.refusedStream), now: 0.1)
        #expect(outcomes(refused.writes).isEmpty)
        #expect(machine.retries.count == 1 && machine.unprocessedResends.count == 1)

        let stopping = machine.completed(tag: tags[2], outcome: Fixture.rejected(403, .invalidProviderToken), now: 0.2)
        #expect(outcomes(stopping.writes) == [.retryable])
        let ending = try #require(stopping.thenStop, "the answer did not stop the campaign")
        #expect(machine.sends, "the stop began before the answer's own line was written")

        let stop = machine.stop(ending)
        #expect(
            Set(outcomes(stop.writes)) == [.retryable, .notSent], "answered once: retryable; never processed: not_sent")
        #expect(stop.flushSink)
        #expect(stop.gracePeriodAfter == nil, "a grace period with nothing in flight")
        #expect(!machine.sends && machine.readsSource, "an early stop reads on, to write not_sent lines")
        #expect(machine.stop(.interrupted).isEmpty, "the first cause wins")
        #expect(machine.stopCause == ending)
    }

    @Test("an interrupt: waiting sends journaled for --resume, nothing more read, a grace period for what is in flight")
    func interrupt() {
        var machine = Machine(configuration: DispatcherConfiguration())
        let tags = submit(&machine, lines: 1...2)
        _ = machine.completed(tag: tags[0], outcome: Fixture.rejected(429, .tooManyRequests), now: 0.1)
        let stop = machine.stop(.interrupted)
        #expect(journaled(stop.writes) == 1)
        #expect(outcomes(stop.writes).isEmpty)
        #expect(stop.gracePeriodAfter == DispatcherConfiguration().drainGracePeriod)
        #expect(!machine.readsSource && machine.inputOpen)
        let graceOver = machine.gracePeriodEnded()
        #expect(graceOver.closeTransport == .now)
        #expect(machine.gracePeriodEnded().isEmpty, "the transport is closed once")
        let answerLost = machine.completed(tag: tags[1], outcome: .failed(.answerLost("closed")), now: 15)
        #expect(outcomes(answerLost.writes) == [.inDoubt])
        #expect(machine.transportClosed(now: 15).reportEnd)
        #expect(machine.summary.ending == .interrupted)
    }

    @Test("a second signal closes the transport at once")
    func abortInFlight() {
        var machine = Machine(configuration: DispatcherConfiguration())
        _ = submit(&machine, lines: 1...2)
        _ = machine.stop(.interrupted)
        let abort = machine.abortInFlight()
        #expect(abort.closeTransport == .now)
        #expect(machine.closingTransport)
    }

    @Test("a failure of the files: the transport closes now, waiting sends dropped, the failure reported at the end")
    func runFailed() throws {
        struct DiskFull: Error {}
        var machine = Machine(configuration: DispatcherConfiguration())
        let tags = submit(&machine, lines: 1...2)
        _ = machine.completed(tag: tags[0], outcome: Fixture.rejected(429, .tooManyRequests), now: 0.1)
        let failed = machine.runFailed(DiskFull(), now: 0.1)
        #expect(failed.closeTransport == .now)
        #expect(!failed.reportEnd, "ended before the transport closed")
        #expect(machine.retries.isEmpty && !machine.readsSource)
        _ = machine.completed(tag: tags[1], outcome: .failed(.notSent("closed")), now: 0.1)
        #expect(machine.transportClosed(now: 0.1).reportEnd)
        #expect(machine.runFailure is DiskFull)
        guard case .stoppedEarly = machine.summary.ending else {
            Issue.record("ended \(machine.summary.ending), not stopped early")
            return
        }
    }

    @Test("a stop while the transport closes at the end of the work still names the run's ending")
    func stopWhileClosing() {
        var machine = Machine(configuration: DispatcherConfiguration())
        #expect(machine.inputExhausted().isEmpty, "no pump turn is under way")
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 0)
        let settled = machine.pumpTurnEnded(transportFreeSlots: 4, now: 0)
        #expect(settled.closeTransport == .afterFlushingSink)
        #expect(!machine.stop(.interrupted).isEmpty)
        #expect(machine.transportClosed(now: 1).reportEnd)
        #expect(machine.summary.ending == .interrupted)
    }

    /// A machine with two records sent, the input read to its end, and the first `rejected` of them answered 429 at
    /// 1 s, then a pump turn at 1 s: the machine, when the first retry falls due, and the wake-up delay it asked for.
    func retryWaiting(rejected: Int) throws -> (Machine, due: Double, delay: Double) {
        var machine = Machine(configuration: DispatcherConfiguration())
        let tags = submit(&machine, lines: 1...2)
        _ = machine.inputExhausted()
        for tag in tags.prefix(rejected) {
            _ = machine.completed(tag: tag, outcome: Fixture.rejected(429, .tooManyRequests), now: 1)
        }
        let due = try #require(machine.retries.nextDue)
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 1)
        let ended = machine.pumpTurnEnded(transportFreeSlots: 4, now: 1)
        let delay = try #require(ended.wakeUpAfter, "no wake-up for a waiting retry")
        return (machine, due, delay)
    }

    @Test("wake-ups: when the next retry falls due, once; none while every slot is busy")
    func wakeUps() throws {
        var (machine, due, delay) = try retryWaiting(rejected: 1)
        #expect(abs(delay - (due - 1)) < 1e-9)
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 1)
        let again = machine.pumpTurnEnded(transportFreeSlots: 4, now: 1)
        #expect(again.wakeUpAfter == nil, "a second wake-up for the same retry")

        _ = machine.pumpTurnBegan(.wakeUp, freeSlots: 0, now: due)
        let busy = machine.pumpTurnEnded(transportFreeSlots: 0, now: due)
        #expect(busy.wakeUpAfter == nil, "a wake-up that could send nothing would only spin")
    }

    @Test(
        "a wake-up handled at a time just before the one it was set for asks for another: a retry is never left without one"
    )
    func earlyWakeUp() throws {
        var (machine, due, _) = try retryWaiting(rejected: 2)
        // The timer fired, but the loop's turn began a moment before the instant it was set for: nothing is due yet.
        let early = due - 0.0005
        #expect(machine.pumpTurnBegan(.wakeUp, freeSlots: 4, now: early).step == .endTurn, "a retry not due sent")
        let ended = machine.pumpTurnEnded(transportFreeSlots: 4, now: early)
        let delay = try #require(ended.wakeUpAfter, "the retry was left waiting for a wake-up that had already fired")
        #expect(abs(delay - 0.0005) < 1e-9)
    }
}
