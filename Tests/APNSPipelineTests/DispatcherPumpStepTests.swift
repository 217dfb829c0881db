import APNSCore
import Testing

@testable import APNSPipeline

/// A pump turn's steps, each an event of the dispatcher's machine whose action names the next step: what to
/// submit, whether to read a record, when the turn ends.
@Suite("Dispatcher pump steps")
struct DispatcherPumpStepTests {
    typealias Machine = DispatcherStateMachine

    struct DiskFull: Error {}

    /// The `readRecord` step for record `line`: the machine's action for it.
    private func read(
        _ machine: inout Machine, _ line: Int, firstOccurrence: Bool = true, kept: KeptValues? = nil
    ) -> DispatcherAction {
        var record = Fixture.record(line, token: Fixture.token(line))
        record.kept = kept
        return machine.recordRead(record, resume: .fresh, resumedSends: 0, firstOccurrence: firstOccurrence)
    }

    /// Runs the `submit` step of `action` at `now` (as if journaled and handed to the transport): its tag and the
    /// action `submitted` returns; nil when the step was no `submit`.
    private func submit(_ action: inout DispatcherAction, _ machine: inout Machine, now: Double = 0)
        -> (tag: UInt64, next: DispatcherAction)?
    {
        let tag = action.submitTag
        guard case .submit(let send) = action.takePumpStep() else { return nil }
        return (tag, machine.submitted(send, tag: tag, now: now))
    }

    @Test("sends waiting go first, a resend before a retry due, then records are read")
    func waitingSendsFirst() throws {
        var configuration = DispatcherConfiguration()
        configuration.retry = ExponentialBackoff(base: 1, cap: 1, maximumAttempts: 5)
        var machine = Machine(configuration: configuration)
        var begun = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 0)
        #expect(begun.step == .readRecord, "a turn with nothing waiting reads")
        var tags: [UInt64] = []
        for line in 1...3 {
            var action = read(&machine, line)
            let (tag, next) = try #require(submit(&action, &machine), "line \(line) was not submitted")
            #expect(next.step == .readRecord)
            tags.append(tag)
        }
        _ = machine.completed(tag: tags[0], outcome: Fixture.rejected(429, .tooManyRequests), now: 0.1)
        _ = machine.completed(tag: tags[1], outcome: .failed(.refusedStream), now: 0.1)
        let due = try #require(machine.retries.nextDue)

        begun = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: due)
        #expect(begun.step == .submit(line: 2), "the resend of what the server never processed goes first")
        var resent = try #require(submit(&begun, &machine, now: due)).next
        #expect(resent.step == .submit(line: 1), "then the retry now due")
        let retried = try #require(submit(&resent, &machine, now: due)).next
        #expect(retried.step == .readRecord, "then the records")
        #expect(machine.turn?.submitted == 2 && machine.inFlight.count == 3)
    }

    @Test("a record with no request to spare waits for a slot, the turn ends, and the next turn submits it first")
    func parkedRecord() throws {
        var machine = Machine(configuration: DispatcherConfiguration())
        #expect(machine.pumpTurnBegan(.pumpTurn, freeSlots: 1, now: 0).step == .readRecord)
        var first = read(&machine, 1)
        let (_, afterSubmit) = try #require(submit(&first, &machine))
        #expect(afterSubmit.step == .readRecord, "one record is read ahead while no send waits")
        let parked = read(&machine, 2)
        #expect(parked.step == .endTurn && parked.flushSink, "a record needing a request read on past the budget")
        #expect(parked.writes.finalResults.isEmpty && machine.unprocessedResends.count == 1)

        let ended = machine.pumpTurnEnded(transportFreeSlots: 0, now: 0)
        #expect(ended.flushTransport && machine.summary.requests == 1)
        #expect(ended.wakeUpAfter == nil, "a wake-up with no free slot would only spin")
        #expect(machine.pumpTurnBegan(.pumpTurn, freeSlots: 1, now: 1).step == .submit(line: 2))
    }

    @Test("records needing no request get their lines, counted as decided; the input's end ends the turn and the run")
    func recordsWithoutRequests() {
        var machine = Machine(configuration: DispatcherConfiguration())
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 0, now: 0)  // no connection yet
        let duplicate = read(&machine, 1, firstOccurrence: false)
        #expect(duplicate.writes.finalResults.map(\.outcome) == [.duplicate])
        #expect(duplicate.step == .readRecord, "a record with a line of its own stopped the reading")
        #expect(machine.summary.count(.duplicate) == 1 && machine.summary.records == 1)

        let exhausted = machine.inputExhausted()
        #expect(exhausted.step == .endTurn && exhausted.flushSink && exhausted.writes.finalResults.isEmpty)
        let ended = machine.pumpTurnEnded(transportFreeSlots: 0, now: 0)
        #expect(!ended.flushTransport, "the transport flushed with nothing submitted")
        #expect(ended.closeTransport == .afterFlushingSink, "a run with nothing to send waited for a connection")
        #expect(machine.pumpTurnEnded(transportFreeSlots: 0, now: 0).isEmpty, "a turn ended twice")
    }

    @Test("a turn reads at most maximumRecordsPerTurn records, then ends and asks for the next on the next loop turn")
    func recordsPerTurn() {
        var configuration = DispatcherConfiguration()
        configuration.maximumRecordsPerTurn = 2
        var machine = Machine(configuration: configuration)
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 0, now: 0)
        #expect(read(&machine, 1, firstOccurrence: false).step == .readRecord)
        #expect(read(&machine, 2, firstOccurrence: false).step == .endTurn)
        #expect(machine.pumpTurnEnded(transportFreeSlots: 0, now: 0).pumpTurn == .nextLoopTurn)
    }

    @Test("a record's kept values reach its final line, whether written at once or after its answer")
    func keptValues() throws {
        let kept = KeptValues(names: ["campaign"], values: ["spring"])
        var machine = Machine(configuration: DispatcherConfiguration())
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 0)
        var sent = read(&machine, 1, kept: kept)
        let (tag, _) = try #require(submit(&sent, &machine))
        #expect(machine.keptBySend.count == 1)
        let duplicate = read(&machine, 2, firstOccurrence: false, kept: kept)
        #expect(duplicate.writes.finalResults.map(\.kept) == [kept])

        let answer = machine.completed(tag: tag, outcome: Fixture.ok(), now: 0.1)
        #expect(answer.writes.finalResults.map(\.kept) == [kept], "the kept values were lost on the way")
        #expect(machine.keptBySend.isEmpty)
    }

    @Test("a failure while a send is about to be submitted: its tag is given back, the turn ends, and the run ends")
    func failureMidTurn() throws {
        var machine = Machine(configuration: DispatcherConfiguration())
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 0)
        var action = read(&machine, 1)
        guard case .submit = action.takePumpStep() else {
            Issue.record("line 1 was not to be submitted")
            return
        }
        // Its journal entry failed: it never left.
        let failed = machine.runFailed(DiskFull(), now: 0)
        #expect(failed.closeTransport == .now && failed.step == .none)
        #expect(machine.inFlight.isEmpty && machine.turn == nil, "a send that never left is awaited")
        #expect(machine.transportClosed(now: 0.1).reportEnd, "the run never ended")
        #expect(machine.runFailure is DiskFull)
    }

    @Test("the end's own flush failing is the run's failure; nothing else changes")
    func endFlushFails() {
        var machine = Machine(configuration: DispatcherConfiguration())
        _ = machine.inputExhausted()
        _ = machine.pumpTurnBegan(.pumpTurn, freeSlots: 4, now: 0)
        _ = machine.pumpTurnEnded(transportFreeSlots: 4, now: 0)
        let end = machine.transportClosed(now: 0.1)
        #expect(end.flushSink && end.reportEnd)
        #expect(machine.runFailed(DiskFull(), now: 0.2).isEmpty)
        #expect(machine.runFailure is DiskFull && machine.state == .ended && machine.summary.ending == .completed)
    }
}

extension DispatcherAction.RecordWrites {
    /// The final lines among the writes, in order (journal entries left out).
    var finalResults: [ResultRecord] {
        switch self {
        case .none: return []
        case .one(.finalResult(let line)): return [line.record]
        case .one(.journalRetryable): return []
        case .many(let all):
            return all.compactMap { if case .finalResult(let line) = $0 { return line.record } else { return nil } }
        }
    }
}
