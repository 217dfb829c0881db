import APNSCore
import Testing

@testable import APNSPipeline

/// `RecordDecision` without a dispatcher: one record in, one effect out, every branch with its exact line.
@Suite("Record decision")
struct RecordDecisionTests {
    private static let key = RecordKey(fileIndex: 0, line: 7)
    private static let token = Fixture.token(7)
    private static let valid = Fixture.record(7, token: token)
    private static let invalid = CampaignRecord(
        key: key,
        content: .invalid(
            InputError(.tokenOddLength, "device token has 3 hex digits: odd length"),
            tokenText: "abc", topicText: "com.example.app"))

    private func effect(
        _ record: CampaignRecord = valid, resume: ResumeStatus = .fresh, resumedSends: Int = 0,
        firstOccurrence: Bool = true, stopCause: CampaignSummary.Ending? = nil,
        configure: (inout DispatcherConfiguration) -> Void = { _ in }
    ) -> RecordDecision.Effect {
        var configuration = DispatcherConfiguration()
        configure(&configuration)
        let decision = RecordDecision(configuration: configuration, stopCause: stopCause)
        return decision.effect(
            for: record, resume: resume, resumedSends: resumedSends, firstOccurrence: firstOccurrence)
    }

    /// The final line of `effect`, or nil (and an issue) when it is not one.
    private func line(_ effect: RecordDecision.Effect) -> ResultRecord? {
        guard case .writeFinalResult(let result) = effect else {
            Issue.record("expected a final line, got \(effect)")
            return nil
        }
        #expect(effect.recordCountChange == 1)
        return result
    }

    private func notification() throws -> PushNotification {
        guard let notification = Self.valid.notification else { throw RecordDecisionTestError.fixture }
        return notification
    }

    @Test("a record the resumed run finished is skipped and not counted, valid or not, duplicate or not")
    func finishedIsSkipped() {
        let cases: [(CampaignRecord, Bool)] = [(Self.valid, true), (Self.valid, false), (Self.invalid, true)]
        for (record, first) in cases {
            let effect = effect(record, resume: .finished, firstOccurrence: first)
            guard case .skip = effect else {
                Issue.record("not skipped: \(effect)")
                continue
            }
            #expect(effect.recordCountChange == 0)
        }
    }

    @Test("an invalid record ends input_error with its code and detail, whatever else holds")
    func invalidRecord() {
        let expected = ResultRecord(
            key: Self.key, outcome: .inputError, token: "abc", topic: "com.example.app",
            reason: "TokenOddLength", detail: "device token has 3 hex digits: odd length")
        for resume in [ResumeStatus.fresh, .inDoubt, .resend] {
            #expect(
                line(effect(Self.invalid, resume: resume, firstOccurrence: false, stopCause: .interrupted)) == expected)
        }
    }

    @Test("a later copy of a (token, topic) pair ends duplicate, unless duplicates are allowed")
    func duplicate() throws {
        let expected = ResultRecord(
            key: Self.key, outcome: .duplicate, token: Self.token, topic: Fixture.topic,
            detail: "same token and topic as an earlier record")
        #expect(line(effect(firstOccurrence: false)) == expected)
        #expect(line(effect(resume: .inDoubt, firstOccurrence: false, stopCause: .interrupted)) == expected)
        guard case .submit = effect(firstOccurrence: false, configure: { $0.allowDuplicates = true }) else {
            Issue.record("allowed duplicate not submitted")
            return
        }
    }

    @Test("a record in doubt after a crash ends in_doubt with the resumed sends as attempts, unless resent")
    func inDoubt() throws {
        let expected = ResultRecord(
            key: Self.key, outcome: .inDoubt, detail: "sent before the crash, never answered", attempts: 3,
            notification: try notification())
        #expect(line(effect(resume: .inDoubt, resumedSends: 3)) == expected)
        #expect(line(effect(resume: .inDoubt, resumedSends: 3, stopCause: .interrupted)) == expected)
        guard case .submit(let send) = effect(resume: .inDoubt, resumedSends: 3, configure: { $0.resendInDoubt = true })
        else {
            Issue.record("in-doubt record not resent with --resend-in-doubt")
            return
        }
        #expect(send.attempts == 0)
    }

    @Test("while the campaign stops, a new record ends not_sent saying why")
    func stopping() throws {
        let interrupted = ResultRecord(
            key: Self.key, outcome: .notSent, detail: "campaign stopped: interrupted", notification: try notification())
        #expect(line(effect(stopCause: .interrupted)) == interrupted)
        let early = ResultRecord(
            key: Self.key, outcome: .notSent, detail: "campaign stopped: BadTopic", notification: try notification())
        #expect(line(effect(resume: .resend, stopCause: .stoppedEarly("BadTopic"))) == early)
        #expect(
            line(
                effect(
                    resume: .inDoubt, stopCause: .stoppedEarly("BadTopic"),
                    configure: { $0.resendInDoubt = true })) == early)
    }

    @Test("a new, fresh or resendable, or in-doubt-with-resend record is submitted with no attempts yet")
    func submitted() throws {
        let cases: [(ResumeStatus, Bool)] = [(.fresh, false), (.resend, false), (.inDoubt, true)]
        for (resume, resendInDoubt) in cases {
            let effect = effect(resume: resume, resumedSends: 2, configure: { $0.resendInDoubt = resendInDoubt })
            guard case .submit(let send) = effect else {
                Issue.record("not submitted (\(resume)): \(effect)")
                continue
            }
            #expect(effect.recordCountChange == 1)
            #expect(send.key == Self.key)
            #expect(send.notification.token.hex == Self.token)
            #expect(send.attempts == 0)
            #expect(send.unprocessed == 0)
        }
    }
}

private enum RecordDecisionTestError: Error { case fixture }
