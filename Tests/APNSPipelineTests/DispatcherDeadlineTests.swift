import APNSCore
import Testing

@testable import APNSPipeline

/// The `--not-after` deadline in the dispatcher's machine, in virtual time: records not sent by then end
/// `expired`, requests in flight are answered as usual, a retry the deadline cuts ends `retryable`.
@Suite("Dispatcher deadline (--not-after)")
struct DispatcherDeadlineTests {
    typealias Machine = DispatcherStateMachine

    private func machine(deadlineAt: Double) -> Machine {
        var configuration = DispatcherConfiguration()
        configuration.notAfter = SendDeadline(at: deadlineAt, text: "2026-12-02T18:00:00Z")
        configuration.retry = ExponentialBackoff(base: 1, cap: 1, maximumAttempts: 5)
        return Machine(configuration: configuration)
    }

    /// Reads record `line`, as a pump turn does.
    private func read(_ machine: inout Machine, _ line: Int) -> DispatcherAction {
        machine.recordRead(
            Fixture.record(line, token: Fixture.token(line)), resume: .fresh, resumedSends: 0, firstOccurrence: true)
    }

    /// Reads and submits record `line` at `now`; returns its tag.
    private func submit(_ machine: inout Machine, _ line: Int, now: Double) -> UInt64? {
        var action = read(&machine, line)
        let tag = action.submitTag
        guard case .submit(let send) = action.takePumpStep() else { return nil }
        _ = machine.submitted(send, tag: tag, now: now)
        return tag
    }

    @Test("the start asks for the deadline's timer; its firing ends the records not sent expired, in flight answered")
    func deadlineCutsTheRun() throws {
        var machine = machine(deadlineAt: 10)
        #expect(machine.start(now: 0).deadlineAfter == 10)
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 1, now: 1)
        let inFlight = try #require(submit(&machine, 1, now: 1))
        let parked = read(&machine, 2)  // no slot: it waits
        #expect(parked.step == .endTurn && machine.unprocessedResends.count == 1, "record 2 does not wait")

        let early = machine.deadlinePassed(now: 9.5)
        #expect(
            early.deadlineAfter == 0.5 && early.writes.finalResults.isEmpty, "a timer that fired early stops nothing")
        let passed = machine.deadlinePassed(now: 10)
        #expect(passed.writes.finalResults.map(\.outcome) == [.expired], "the waiting record ends expired")
        #expect(passed.writes.finalResults.first?.detail == "not sent by the --not-after deadline 2026-12-02T18:00:00Z")
        #expect(passed.gracePeriodAfter != nil, "requests in flight are awaited")
        #expect(!machine.sends)

        let later = read(&machine, 3)
        #expect(later.writes.finalResults.map(\.outcome) == [.expired], "a record read after the deadline was sent")
        let answer = machine.completed(tag: inFlight, outcome: Fixture.ok(), now: 10.2)
        #expect(answer.writes.finalResults.map(\.outcome) == [.delivered], "the request in flight is answered as usual")

        #expect(machine.inputExhausted().step == .endTurn)
        #expect(machine.pumpTurnEnded(transportFreeSlots: 0, now: 10.3).closeTransport == .afterFlushingSink)
        _ = machine.transportClosed(now: 10.4)
        #expect(machine.summary.ending == .deadlinePassed("2026-12-02T18:00:00Z"))
    }

    @Test("a run started past the deadline sends nothing: every record read ends expired")
    func startPastTheDeadline() {
        var machine = machine(deadlineAt: 10)
        let start = machine.start(now: 11)
        #expect(start.deadlineAfter == nil && !machine.sends)
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 11)
        #expect(machine.turn?.budget.requests == 0)
        let read = read(&machine, 1)
        guard let result = read.writes.finalResults.first else {
            Issue.record("a record was sent past the deadline")
            return
        }
        #expect(result.outcome == .expired && result.attempts == 0)
    }

    @Test("past the deadline no request starts, even before the deadline's timer has run")
    func noBudgetPastTheDeadline() {
        var machine = machine(deadlineAt: 10)
        _ = machine.start(now: 0)
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 9.9)
        #expect(machine.turn?.budget.requests == 4)
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 10)
        #expect(machine.turn?.budget.requests == 0)
    }

    @Test("a retry due after the deadline is not queued: the record was sent, so it ends retryable, saying why")
    func retryAfterTheDeadline() throws {
        var machine = machine(deadlineAt: 10)
        _ = machine.start(now: 0)
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 8)
        let soon = try #require(submit(&machine, 1, now: 8))
        let late = try #require(submit(&machine, 2, now: 8))
        let queued = machine.completed(tag: soon, outcome: Fixture.rejected(429, .tooManyRequests), now: 8.5)
        #expect(
            queued.writes.finalResults.isEmpty && machine.retries.count == 1, "a retry due before the deadline waits")
        let cut = machine.completed(tag: late, outcome: Fixture.rejected(429, .tooManyRequests), now: 9.5)
        let line = try #require(cut.writes.finalResults.first)
        #expect(line.outcome == .retryable && line.reason == "TooManyRequests")
        #expect(line.detail == "not retried: the --not-after deadline 2026-12-02T18:00:00Z came first")

        let passed = machine.deadlinePassed(now: 10)  // the queued retry's slot never came
        #expect(passed.writes.finalResults.map(\.outcome) == [.retryable])
        #expect(machine.retries.isEmpty)
    }

    @Test("the deadline's timer after a stop for another cause, or once the work is done, changes nothing")
    func deadlineAfterAnotherStop() {
        var machine = machine(deadlineAt: 10)
        _ = machine.start(now: 0)
        _ = machine.stop(.interrupted)
        #expect(machine.deadlinePassed(now: 10).isEmpty)
        #expect(machine.stopCause == .interrupted)

        var done = self.machine(deadlineAt: 10)
        _ = done.start(now: 0)
        _ = done.inputExhausted()
        _ = done.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 5)
        let settled = done.pumpTurnEnded(transportFreeSlots: 4, now: 5)  // every record answered: the transport closes
        #expect(settled.closeTransport == .afterFlushingSink)
        #expect(done.deadlinePassed(now: 10).isEmpty)
        _ = done.transportClosed(now: 10.1)
        #expect(done.summary.ending == .completed, "a run that finished its work before the deadline ended by it")
    }
}
