import APNSCore
import Testing

@testable import APNSPipeline

@Suite("Dispatcher")
struct DispatcherTests {
    @Test("a mixed campaign: every record gets exactly its outcome")
    func mixedCampaign() throws {
        var records = (1...20).map { Fixture.record($0, token: Fixture.token($0)) }
        records.append(Fixture.record(21, token: "abc"))  // odd length
        records.append(Fixture.record(22, token: Fixture.token(3)))  // duplicate of line 3
        records.append(Fixture.record(23, token: Fixture.token(3), topic: "com.other"))  // same token, other topic
        records.append(Fixture.record(24, token: Fixture.token(24, suffix: "dead")))
        records.append(Fixture.record(25, token: Fixture.token(25, suffix: "0bad")))
        let run = DispatchRun(records: records) { token, _ in
            if token.hasSuffix("dead") { return Fixture.rejected(410, .unregistered, timestamp: 1_700_000_000_000) }
            if token.hasSuffix("0bad") { return Fixture.rejected(400, .badDeviceToken) }
            return Fixture.ok()
        }
        let summary = try #require(run.run())
        run.expectOneLineEach(records: 25)
        #expect(summary.ending == .completed)
        #expect(summary.count(.delivered) == 21)
        #expect(summary.count(.inputError) == 1)
        #expect(summary.count(.duplicate) == 1)
        #expect(summary.count(.prune) == 2)
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 21)) == [.inputError])
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 22)) == [.duplicate])
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 23)) == [.delivered])
        let dead = try #require(run.sink.results.first { $0.key.line == 24 })
        #expect(dead.timestamp == 1_700_000_000_000)
        #expect(dead.reason == "Unregistered")
        #expect(run.transport.totalSends == 23, "duplicates and invalid records are never sent")
        #expect(run.transport.maximumInFlight <= 4)
        #expect(run.transport.journalViolations == 0, "a request left before its journal entry was flushed")
        #expect(run.sink.journaledSent.count == 23)
    }

    @Test("429 then success: retried with back-off, counted as attempts")
    func retriesThenDelivers() throws {
        let run = DispatchRun(records: [Fixture.record(1, token: Fixture.token(1))]) { _, previous in
            previous < 2 ? Fixture.rejected(429, .tooManyRequests) : Fixture.ok()
        }
        let summary = try #require(run.run())
        let result = try #require(run.sink.results.first)
        #expect(result.outcome == .delivered)
        #expect(result.attempts == 3)
        #expect(summary.retries == 2)
        #expect(run.scheduler.now >= 0.25 + 0.5, "the back-off was skipped")
        #expect(run.sink.journaledRetryable.count == 2)
    }

    @Test("500 forever: gives up after the configured attempts, replayable with the notification")
    func givesUp() throws {
        var configuration = DispatcherConfiguration()
        configuration.retry = ExponentialBackoff(base: 0.1, cap: 1, maximumAttempts: 3)
        let run = DispatchRun(records: [Fixture.record(1, token: Fixture.token(1))], configuration: configuration) {
            _, _ in
            Fixture.rejected(500, .internalServerError)
        }
        _ = try #require(run.run())
        let result = try #require(run.sink.results.first)
        #expect(result.outcome == .retryable)
        #expect(result.attempts == 3)
        #expect(result.status == 500)
        #expect(result.payload != nil && result.pushType != nil, "replay needs the notification")
        #expect(run.transport.totalSends == 3)
    }

    @Test("wrong credentials stop the campaign early: the rest is not sent")
    func stopsEarly() throws {
        let records = (1...1000).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records, capacity: 1) { _, _ in Fixture.rejected(403, .invalidProviderToken) }
        let summary = try #require(run.run())
        run.expectOneLineEach(records: 1000)
        guard case .stoppedEarly(let why) = summary.ending else {
            Issue.record("did not stop early: \(summary.ending)")
            return
        }
        #expect(why.contains("InvalidProviderToken"))
        #expect(run.transport.totalSends == 5)
        #expect(summary.count(.retryable) == 5)
        #expect(summary.count(.notSent) == 995)
        #expect(run.sink.results.filter { $0.outcome == .notSent }.allSatisfy { $0.payload != nil })
    }

    @Test(
        "refused streams are resent without using up --max-attempts; the line counts every request, the summary each resend"
    )
    func refusedStreams() throws {
        let run = DispatchRun(records: [Fixture.record(1, token: Fixture.token(1))]) { _, previous in
            previous < 3 ? .failed(.refusedStream) : Fixture.ok()
        }
        let summary = try #require(run.run())
        let result = try #require(run.sink.results.first)
        #expect(result.outcome == .delivered)
        #expect(result.attempts == 4, "every request the record made")
        #expect(summary.retries == 3)
        #expect(run.transport.totalSends == 4)
    }

    @Test("a lost answer is in doubt, and resent only when asked")
    func inDoubt() throws {
        let run = DispatchRun(records: [Fixture.record(1, token: Fixture.token(1))]) { _, previous in
            previous == 0 ? .failed(.answerLost("GOAWAY")) : Fixture.ok()
        }
        _ = try #require(run.run())
        #expect(run.sink.results.map(\.outcome) == [.inDoubt])
        #expect(run.transport.totalSends == 1)

        var configuration = DispatcherConfiguration()
        configuration.resendInDoubt = true
        let resending = DispatchRun(records: [Fixture.record(1, token: Fixture.token(1))], configuration: configuration)
        { _, previous in
            previous == 0 ? .failed(.answerLost("GOAWAY")) : Fixture.ok()
        }
        _ = try #require(resending.run())
        #expect(resending.sink.results.map(\.outcome) == [.delivered])
        #expect(resending.transport.totalSends == 2)
    }

    @Test("an interrupt finishes what is in flight and leaves unread records for --resume")
    func interrupt() throws {
        let records = (1...100).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records, capacity: 4) { _, _ in Fixture.ok() }
        let summary = try #require(run.run(interruptAfter: 20))
        #expect(summary.ending == .interrupted)
        let lines = run.sink.results.count
        #expect(lines > 0 && lines < 100)
        #expect(run.sink.results.allSatisfy { $0.outcome == .delivered }, "in-flight requests were answered")
        #expect(run.sink.journaledSent.count == lines, "every sent record has its line")
        #expect(run.source.pulled <= lines + 4)
    }

    @Test("resume: finished records are skipped, in-doubt ones reported, retryable ones resent")
    func resume() throws {
        let records = (1...6).map { Fixture.record($0, token: Fixture.token($0)) } + [Fixture.record(7, token: "abc")]
        let statuses: [Int: ResumeStatus] = [1: .finished, 2: .finished, 3: .inDoubt, 4: .resend, 7: .finished]
        let run = DispatchRun(records: records, resume: { statuses[$0.line] ?? .fresh }) { _, _ in Fixture.ok() }
        _ = try #require(run.run())
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 1)).isEmpty)
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 2)).isEmpty)
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 3)) == [.inDoubt])
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 4)) == [.delivered])
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 5)) == [.delivered])
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 7)).isEmpty, "an invalid record got a second line")
        #expect(run.transport.totalSends == 3)
    }

    @Test("resume still recognises duplicates of records the earlier run finished")
    func resumeDuplicates() throws {
        let records = [Fixture.record(1, token: Fixture.token(1)), Fixture.record(2, token: Fixture.token(1))]
        let run = DispatchRun(records: records, resume: { $0.line == 1 ? .finished : .fresh }) { _, _ in Fixture.ok() }
        _ = try #require(run.run())
        #expect(run.sink.outcome(of: RecordKey(fileIndex: 0, line: 2)) == [.duplicate])
        #expect(run.transport.totalSends == 0)
    }

    @Test("the rate cap paces requests")
    func rateCap() throws {
        var configuration = DispatcherConfiguration()
        configuration.ratePerSecond = 100
        let records = (1...300).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records, capacity: 50, configuration: configuration) { _, _ in Fixture.ok() }
        let summary = try #require(run.run())
        #expect(summary.count(.delivered) == 300)
        #expect(run.scheduler.now >= 2.8, "300 requests at 100/s took \(run.scheduler.now) s")
    }

    @Test("many records and slots: the limit is never exceeded and nothing is sent twice")
    func manyRecords() throws {
        let records = (1...5000).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records, capacity: 100) { _, _ in Fixture.ok() }
        let summary = try #require(run.run())
        run.expectOneLineEach(records: 5000)
        #expect(summary.count(.delivered) == 5000)
        #expect(run.transport.maximumInFlight <= 100)
        #expect(run.transport.sends.values.allSatisfy { $0 == 1 })
        #expect(summary.latencies.count == 5000)
    }

    /// Starts `run` and runs its scheduler for at most `limit` tasks (a dispatcher that spins on wake-ups at the
    /// same instant never lets the manual clock advance); returns the summary if the run finished.
    private func runBounded(_ run: DispatchRun, limit: Int = 200_000) -> CampaignSummary? {
        var result: CampaignSummary?
        run.dispatcher.start { summary, _ in result = summary }
        let ran = run.scheduler.run(limit: limit)
        #expect(ran < limit, "the dispatcher kept scheduling wake-ups without time passing")
        return result
    }

    @Test("a retry that falls due while every slot is busy waits for a slot instead of spinning")
    func retryDueWithoutFreeSlot() throws {
        let records = (1...100).map { Fixture.record($0, token: Fixture.token($0)) }
        let first = Fixture.token(1)
        let run = DispatchRun(records: records, capacity: 1) { token, previous in
            token == first && previous == 0 ? Fixture.rejected(429, .tooManyRequests) : Fixture.ok()
        }
        let summary = try #require(runBounded(run))
        run.expectOneLineEach(records: 100)
        #expect(summary.count(.delivered) == 100)
        #expect(run.transport.sends[first] == 2)
    }

    @Test("a retry that falls due while the rate cap has no token waits for the token instead of spinning")
    func retryDueWithoutRateToken() throws {
        var configuration = DispatcherConfiguration()
        configuration.ratePerSecond = 10
        let records = (1...30).map { Fixture.record($0, token: Fixture.token($0)) }
        let first = Fixture.token(1)
        let run = DispatchRun(records: records, capacity: 50, configuration: configuration) { token, previous in
            token == first && previous == 0 ? Fixture.rejected(429, .tooManyRequests) : Fixture.ok()
        }
        let summary = try #require(runBounded(run))
        run.expectOneLineEach(records: 30)
        #expect(summary.count(.delivered) == 30)
    }

    @Test("refused resends after the input is exhausted still go out under a rate cap")
    func refusedResendUnderRateCap() throws {
        var configuration = DispatcherConfiguration()
        configuration.ratePerSecond = 20  // a burst of 2: the first turn takes both tokens, sends one record
        let run = DispatchRun(
            records: [Fixture.record(1, token: Fixture.token(1))], capacity: 4,
            configuration: configuration
        ) { _, previous in
            previous < 2 ? .failed(.refusedStream) : Fixture.ok()
        }
        let summary = try #require(runBounded(run), "the run stalled with a resend waiting")
        #expect(summary.count(.delivered) == 1)
        #expect(run.transport.totalSends == 3)
    }
}
