import APNSCore
import Testing

@testable import APNSPipeline

@Suite("Dispatch policy")
struct DispatchPolicyTests {
    @Test("back-off grows, is capped, and keeps jitter within half a step")
    func backoff() {
        let backoff = ExponentialBackoff(base: 0.5, cap: 8, maximumAttempts: 5)
        var generator = SplitMix64(seed: 7)
        for attempt in 1...10 {
            let step = min(8, 0.5 * Double(1 << (attempt - 1)))
            for _ in 0..<200 {
                let delay = backoff.delay(afterAttempt: attempt, using: &generator)
                #expect(delay >= step / 2 && delay <= step, "attempt \(attempt): \(delay)")
            }
        }
        #expect(backoff.allowsRetry(afterAttempts: 4))
        #expect(!backoff.allowsRetry(afterAttempts: 5))
    }

    @Test("jitter spreads a burst of retries")
    func jitterSpreads() {
        var generator = SplitMix64(seed: 7)
        let delays = Set((0..<100).map { _ in ExponentialBackoff.requests.delay(afterAttempt: 3, using: &generator) })
        #expect(delays.count > 50)
    }

    @Test("the campaign stops after the threshold of same-reason campaign failures in a row")
    func stopsOnCredentials() {
        var health = CampaignHealth(threshold: 3)
        let invalid = OutcomePolicy.action(for: .answered(PushAnswer(status: 403, reason: .invalidProviderToken)))
        #expect(health.record(invalid, reason: .invalidProviderToken) == .keepGoing)
        #expect(health.record(invalid, reason: .invalidProviderToken) == .keepGoing)
        guard case .stop(let why) = health.record(invalid, reason: .invalidProviderToken) else {
            Issue.record("did not stop")
            return
        }
        #expect(why.contains("InvalidProviderToken"))
    }

    @Test("a delivery or a prune clears the count; per-record rejections and retries do not count")
    func resets() {
        var health = CampaignHealth(threshold: 2)
        let badTopic = SendAction.reject(campaignWide: true)
        #expect(health.record(badTopic, reason: .badTopic) == .keepGoing)
        #expect(health.record(.delivered, reason: nil) == .keepGoing)
        #expect(health.record(badTopic, reason: .badTopic) == .keepGoing)
        #expect(health.record(.prune, reason: .unregistered) == .keepGoing)
        #expect(health.record(badTopic, reason: .badTopic) == .keepGoing)
        #expect(health.record(.reject(campaignWide: false), reason: .payloadTooLarge) == .keepGoing)
        #expect(health.record(.retry(.afterBackoff), reason: .tooManyRequests) == .keepGoing)
        #expect(health.record(badTopic, reason: .badTopic) != .keepGoing)
    }

    @Test("different reasons in a row do not add up")
    func differentReasons() {
        var health = CampaignHealth(threshold: 2)
        #expect(health.record(.reject(campaignWide: true), reason: .badTopic) == .keepGoing)
        #expect(health.record(.reject(campaignWide: true), reason: .topicDisallowed) == .keepGoing)
        #expect(health.record(.reject(campaignWide: true), reason: .topicDisallowed) != .keepGoing)
    }

    @Test("the rate limiter holds the rate over simulated time")
    func rateLimiter() {
        var limiter = SendRateLimiter(perSecond: 1000)
        var sent = 0
        var now = 0.0
        while now < 10 {
            sent += limiter.take(upTo: 10_000, now: now)
            now += 0.001
        }
        #expect(sent >= 9_900 && sent <= 10_100, "\(sent)")
        var idle = SendRateLimiter(perSecond: 10)
        #expect(idle.take(upTo: 100, now: 0) == 1)
        #expect(idle.take(upTo: 100, now: 0) == 0)
        let wait = idle.delayUntilNext(now: 0)
        #expect(wait > 0.09 && wait <= 0.1)
    }
}
