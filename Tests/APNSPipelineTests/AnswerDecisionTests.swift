import APNSCore
import Testing

@testable import APNSPipeline

/// `AnswerDecision` without a dispatcher: one action in, one effect out.
@Suite("Answer decision")
struct AnswerDecisionTests {
    private func send(attempts: Int = 1, unprocessed: Int = 0) throws -> PendingSend {
        guard case .notification(let notification) = Fixture.record(1, token: Fixture.token(1)).content else {
            throw DecisionTestError.fixture
        }
        var send = PendingSend(key: RecordKey(fileIndex: 0, line: 1), notification: notification)
        send.attempts = attempts
        send.unprocessed = unprocessed
        return send
    }

    private func effect(
        _ action: SendAction, send: PendingSend, stopCause: CampaignSummary.Ending? = nil,
        configuration: DispatcherConfiguration = DispatcherConfiguration()
    ) -> AnswerDecision.Effect {
        var generator = SplitMix64(seed: 7)
        let decision = AnswerDecision(configuration: configuration, stopCause: stopCause, sends: stopCause == nil)
        return decision.effect(of: action, answer: nil, send: send, using: &generator)
    }

    @Test("a 429 is retried after a back-off; an expired provider token at once")
    func retries() throws {
        guard case .retryLater(_, let backoff) = effect(.retry(.afterBackoff), send: try send()) else {
            Issue.record("not retried")
            return
        }
        #expect(backoff > 0)
        guard case .retryLater(_, let resign) = effect(.retry(.afterResigningToken), send: try send()) else {
            Issue.record("not retried")
            return
        }
        #expect(resign == 0)
    }

    @Test(
        "after an interrupt a retryable record is left for --resume; after an early stop it ends not_sent or retryable")
    func retryWhileStopping() throws {
        guard case .leaveForResume = effect(.retry(.afterBackoff), send: try send(), stopCause: .interrupted) else {
            Issue.record("not left for --resume")
            return
        }
        let stopped = CampaignSummary.Ending.stoppedEarly("BadTopic")
        guard
            case .writeFinalResult(let neverSent) = effect(
                .retry(.immediately), send: try send(attempts: 0),
                stopCause: stopped),
            case .writeFinalResult(let tried) = effect(.retry(.afterBackoff), send: try send(), stopCause: stopped)
        else {
            Issue.record("no final line")
            return
        }
        #expect(neverSent.outcome == .notSent)
        #expect(tried.outcome == .retryable)
    }

    @Test("a request never processed is resent until the limit, then ends not_sent")
    func unprocessed() throws {
        let limit = DispatcherConfiguration().maximumUnprocessedResends
        guard case .resendUnprocessed = effect(.retry(.immediately), send: try send(attempts: 0, unprocessed: limit)),
            case .writeFinalResult(let result) = effect(
                .retry(.immediately), send: try send(attempts: 0, unprocessed: limit + 1))
        else {
            Issue.record("the limit was not applied")
            return
        }
        #expect(result.outcome == .notSent)
    }

    @Test("an answer lost is in doubt, or resent with --resend-in-doubt while the run sends")
    func inDoubt() throws {
        guard case .writeFinalResult(let result) = effect(.inDoubt, send: try send()) else {
            Issue.record("no final line")
            return
        }
        #expect(result.outcome == .inDoubt)
        var configuration = DispatcherConfiguration()
        configuration.resendInDoubt = true
        guard case .retryLater(_, 0) = effect(.inDoubt, send: try send(), configuration: configuration),
            case .writeFinalResult = effect(
                .inDoubt, send: try send(), stopCause: .interrupted, configuration: configuration)
        else {
            Issue.record("--resend-in-doubt not applied")
            return
        }
    }
}

private enum DecisionTestError: Error { case fixture }
