import APNSCrypto
import Testing

/// A clock the test drives.
final class DrivenClock {
    var now: Int64

    init(_ now: Int64) {
        self.now = now
    }
}

/// The refresh policy under a driven clock.
@Suite("provider-token cache")
struct ProviderTokenCacheTests {
    static let start: Int64 = 1_700_000_000
    let signer: ProviderTokenSigner

    init() throws {
        signer = try ProviderTokenSigner(key: ProviderKey.generate(), keyID: "KEYID12345", teamID: "TEAMID1234")
    }

    private func cache(_ clock: DrivenClock, interval: Int64 = ProviderTokenCache.defaultRefreshIntervalSeconds) throws -> ProviderTokenCache {
        try ProviderTokenCache(signer: signer, refreshIntervalSeconds: interval, clock: { clock.now })
    }

    @Test("the refresh interval must lie within 20...60 minutes; 50 is the default")
    func intervalBounds() throws {
        let clock = DrivenClock(Self.start)
        for rejected: Int64 in [0, 60, 1199, 3601, 7200, -1] {
            #expect(throws: CryptoError.refreshIntervalOutOfRange) { try cache(clock, interval: rejected) }
        }
        for accepted: Int64 in [1200, 3000, 3600] {
            #expect(try cache(clock, interval: accepted).refreshIntervalSeconds == accepted)
        }
        #expect(try ProviderTokenCache(signer: signer).refreshIntervalSeconds == 50 * 60)
    }

    @Test("one token is shared until it is refreshIntervalSeconds old, then exactly one new one is signed")
    func regularRefresh() throws {
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock)
        let first = try cache.currentToken()
        #expect(first.issuedAt == Self.start)
        #expect(first.authorization == Array("bearer \(first.jwt)".utf8))
        clock.now += 50 * 60 - 1
        #expect(try cache.currentToken() == first)
        clock.now += 1
        let second = try cache.currentToken()
        #expect(second != first && second.issuedAt == clock.now)
        #expect(try cache.currentToken() == second)
        #expect(cache.signingCount == 2)
        let claims = try ProviderTokenVerifier.verify(second.jwt, with: signer.key.publicKey)
        #expect(claims.signatureIsValid && claims.token.issuedAt == clock.now)
    }

    @Test("ExpiredProviderToken for a token 20 minutes old or more re-signs at once")
    func invalidationOfOldEnoughToken() throws {
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock)
        let first = try cache.currentToken()
        clock.now += 20 * 60
        guard case .refreshed(let fresh) = try cache.invalidate(token: first) else {
            Issue.record("a 20-minute-old token was not replaced")
            return
        }
        #expect(fresh.issuedAt == clock.now && fresh != first)
        #expect(try cache.currentToken() == fresh)
        // Another connection reports the same, now stale, token: nothing is signed.
        #expect(try cache.invalidate(token: first) == .alreadyReplaced(fresh))
        #expect(cache.signingCount == 2)
    }

    @Test("ExpiredProviderToken for a younger token keeps it, says when a refresh is allowed, and refreshes then")
    func invalidationTooEarly() throws {
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock)
        let first = try cache.currentToken()
        clock.now += 10 * 60
        let answer = try cache.invalidate(token: first)
        #expect(answer == .refreshNotYetAllowed(current: first, allowedAt: Self.start + 20 * 60))
        clock.now = Self.start + 20 * 60 - 1
        #expect(try cache.currentToken() == first)
        #expect(cache.signingCount == 1)
        clock.now += 1
        let second = try cache.currentToken()
        #expect(second.issuedAt == Self.start + 20 * 60, "a refused invalidation brings the refresh forward to 20 minutes")
        #expect(cache.signingCount == 2)
    }

    @Test("a week of random traffic and random ExpiredProviderToken answers: signings >= 20 minutes apart, no token older than the interval",
          arguments: [1200, 3000, 3600] as [Int64])
    func simulatedRun(interval: Int64) throws {
        var random = SplitMix64(seed: UInt64(interval))
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock, interval: interval)
        var signings: [Int64] = []
        var served: [ProviderToken] = []
        var refused = 0
        var refreshed = 0
        while clock.now < Self.start + 7 * 86_400 {
            clock.now += Int64.random(in: 0...90, using: &random)
            let token = try cache.currentToken()
            if signings.last != token.issuedAt { signings.append(token.issuedAt) }
            let age = clock.now - token.issuedAt
            try #require(age >= 0 && age < interval && age < 3600, "served a token \(age) seconds old")
            served.append(token)
            if served.count > 50 { served.removeFirst() }
            // Now and then APNs calls a token expired: the one just used, or one used a while ago.
            if Int.random(in: 0..<40, using: &random) == 0 {
                let reported = served[Int.random(in: 0..<served.count, using: &random)]
                switch try cache.invalidate(token: reported) {
                case .refreshed(let fresh):
                    refreshed += 1
                    #expect(reported == token && fresh.issuedAt == clock.now)
                    signings.append(fresh.issuedAt)
                case .alreadyReplaced(let current):
                    #expect(reported != token && current == token)
                case .refreshNotYetAllowed(let current, let allowedAt):
                    refused += 1
                    #expect(current == token && allowedAt == token.issuedAt + 20 * 60 && clock.now < allowedAt)
                }
            }
        }
        #expect(signings.count == cache.signingCount)
        for (earlier, later) in zip(signings, signings.dropFirst()) {
            try #require(later - earlier >= 20 * 60, "signed at \(earlier) and again at \(later)")
        }
        #expect(refused > 0, "the run must meet invalidations of young tokens")
        if interval > 20 * 60 {  // with a 20-minute interval no current token ever reaches 20 minutes
            #expect(refreshed > 0, "the run must meet invalidations of old-enough tokens")
        }
    }
}
