import APNSCore
import Testing

@testable import APNSPipeline

/// Tokens called bad (`BadDeviceToken`, `DeviceTokenNotForTopic`) before any token of their topic is accepted: held
/// back, released as dead tokens by the first acceptance, and, with none accepted, the campaign stopped with no
/// token listed for pruning (the production/development mix-up, another app's tokens).
@Suite("token rejections held until the topic is confirmed")
struct TokenRejectionTests {

    @Test(
        "every token BadDeviceToken (the other environment): stopped after 20, nothing to prune, all sent again later")
    func wrongEnvironment() throws {
        let records = (1...3000).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records, capacity: 8) { _, _ in Fixture.rejected(400, .badDeviceToken) }
        let summary = try #require(run.run())
        run.expectOneLineEach(records: 3000)
        guard case .stoppedEarly(let why) = summary.ending else {
            Issue.record("did not stop: \(summary.ending)")
            return
        }
        #expect(why == "BadDeviceToken for every token of topic com.example.app (20 answers, none accepted)")
        #expect(summary.count(.prune) == 0, "live tokens listed for deletion")
        #expect(run.transport.totalSends < 40, "\(run.transport.totalSends) requests")
        #expect(summary.count(.retryable) == run.transport.totalSends)
        #expect(summary.count(.retryable) + summary.count(.notSent) == 3000)
        let held = run.sink.results.filter { $0.outcome == .retryable }
        #expect(
            held.allSatisfy {
                $0.reason == "BadDeviceToken" && $0.payload != nil && $0.detail?.contains("held back") == true
            })
        #expect(held.allSatisfy { StoppedCampaign.isSentAgain($0) })
    }

    @Test("another app's tokens (DeviceTokenNotForTopic for all): stopped for the topic")
    func anotherApp() throws {
        let records = (1...500).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records) { _, _ in Fixture.rejected(400, .deviceTokenNotForTopic) }
        let summary = try #require(run.run())
        guard case .stoppedEarly(let why) = summary.ending else {
            Issue.record("did not stop: \(summary.ending)")
            return
        }
        #expect(why.hasPrefix("DeviceTokenNotForTopic for every token of topic com.example.app"))
        #expect(StoppedCampaign.Cause(reason: why) == .topic)
        #expect(summary.count(.prune) == 0)
    }

    @Test("bad tokens first, then one accepted: the held ones are dead tokens, the campaign completes")
    func releasedByAnAcceptance() throws {
        let records = (1...60).map { Fixture.record($0, token: Fixture.token($0, suffix: $0 <= 15 ? "0bad" : "")) }
        let run = DispatchRun(records: records, capacity: 4) { token, _ in
            token.hasSuffix("0bad") ? Fixture.rejected(400, .badDeviceToken) : Fixture.ok()
        }
        let summary = try #require(run.run())
        run.expectOneLineEach(records: 60)
        #expect(summary.ending == .completed)
        #expect(summary.count(.prune) == 15 && summary.count(.delivered) == 45)
        #expect(run.sink.results.filter { $0.outcome == .prune }.allSatisfy { $0.detail == nil && $0.status == 400 })
        #expect(run.transport.totalSends == 60, "nothing sent twice")
    }

    @Test("a 410 confirms the topic too: the token was this app's, in this environment")
    func releasedByUnregistered() throws {
        let records = (1...12).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records, capacity: 1) { token, _ in
            token.hasSuffix("c")
                ? Fixture.rejected(410, .unregistered, timestamp: 1) : Fixture.rejected(400, .badDeviceToken)
        }
        let summary = try #require(run.run())
        #expect(summary.ending == .completed && summary.count(.prune) == 12)
    }

    @Test(
        "a topic none of whose few tokens was accepted, beside a confirmed one: its dead tokens are marked unconfirmed")
    func unconfirmedTopicBesideAConfirmedOne() throws {
        var records = (1...30).map { Fixture.record($0, token: Fixture.token($0)) }
        records += (31...35).map { Fixture.record($0, token: Fixture.token($0), topic: "com.example.other") }
        let run = DispatchRun(records: records) { token, _ in
            Int(token, radix: 16).map { $0 > 30 } == true
                ? Fixture.rejected(400, .deviceTokenNotForTopic) : Fixture.ok()
        }
        let summary = try #require(run.run())
        run.expectOneLineEach(records: 35)
        #expect(summary.ending == .completed)
        let other = run.sink.results.filter { $0.topic == "com.example.other" }
        #expect(other.count == 5 && other.allSatisfy { $0.outcome == .prune })
        #expect(other.allSatisfy { $0.detail == TokenRejectionCheck.unconfirmedDetail(topic: "com.example.other") })
        var prune = PruneList()
        for line in run.sink.results { prune.add(line) }
        #expect(
            prune.entries.isEmpty && prune.heldBack == 5,
            "prune lists \(prune.entries.count), holds back \(prune.heldBack)")
    }

    @Test("fewer bad tokens than the limit and none accepted at all: stopped at the end, nothing to prune")
    func smallCampaignNoneAccepted() throws {
        let records = (1...8).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records) { _, _ in Fixture.rejected(400, .badDeviceToken) }
        let summary = try #require(run.run())
        run.expectOneLineEach(records: 8)
        guard case .stoppedEarly(let why) = summary.ending else {
            Issue.record("did not stop: \(summary.ending)")
            return
        }
        #expect(why.contains("(8 answers, none accepted)"))
        #expect(summary.count(.retryable) == 8 && summary.count(.prune) == 0)
    }

    @Test("an interrupt while rejections are held: they are journaled to be sent again, not written")
    func interruptedWhileHeld() throws {
        let records = (1...200).map { Fixture.record($0, token: Fixture.token($0)) }
        let run = DispatchRun(records: records, capacity: 2) { _, _ in Fixture.rejected(400, .badDeviceToken) }
        let summary = try #require(run.run(interruptAfter: 12))
        #expect(summary.ending == .interrupted)
        #expect(summary.count(.prune) == 0 && summary.count(.retryable) == 0)
        #expect(!run.sink.journaledRetryable.isEmpty)
    }
}
