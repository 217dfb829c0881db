import APNSCore
import APNSCrypto
import Foundation
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

    private func cache(_ clock: DrivenClock, interval: Int64 = ProviderTokenCache.defaultRefreshIntervalSeconds) throws
        -> ProviderTokenCache
    {
        // The wall and uptime clocks move together here: no clock step.
        try ProviderTokenCache(
            signer: signer, refreshIntervalSeconds: interval, clock: { clock.now }, uptime: { clock.now })
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

    @Test("currentSerial follows the same refresh as currentToken: it signs the first and each due token, once")
    func serialFollowsRefresh() throws {
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock)
        #expect(try cache.currentSerial() == 1)
        #expect(cache.signingCount == 1)
        #expect(try cache.currentToken().serial == 1)
        clock.now += 50 * 60 - 1
        #expect(try cache.currentSerial() == 1)
        clock.now += 1
        #expect(try cache.currentSerial() == 2)
        #expect(try cache.currentSerial() == 2)
        #expect(try cache.currentToken().serial == 2 && cache.signingCount == 2)
    }

    @Test(
        "ExpiredProviderToken for the token in use re-signs at once, even a young one; more answers for it sign nothing"
    )
    func invalidationResignsAtOnce() throws {
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock)
        let first = try cache.currentToken()
        clock.now += 10 * 60
        guard case .refreshed(let fresh) = try cache.invalidate(token: first) else {
            Issue.record("a token APNs declared expired was kept")
            return
        }
        #expect(fresh.issuedAt == clock.now && fresh != first)
        #expect(try cache.currentToken() == fresh)
        // The other requests in flight with the same token come back expired too: nothing more is signed.
        for _ in 0..<5 {
            #expect(try cache.invalidate(token: first) == .alreadyReplaced(fresh))
        }
        #expect(cache.signingCount == 2)
    }

    @Test("after a re-sign forced by an expiry answer, the routine refresh counts from the new token")
    func routineRefreshCountsFromForcedToken() throws {
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock)
        let first = try cache.currentToken()
        clock.now += 5 * 60
        _ = try cache.invalidate(token: first)
        let forced = try cache.currentToken()
        #expect(forced.issuedAt == Self.start + 5 * 60)
        clock.now = forced.issuedAt + 50 * 60 - 1
        #expect(try cache.currentToken() == forced)
        clock.now += 1
        let routine = try cache.currentToken()
        #expect(routine != forced && routine.issuedAt == forced.issuedAt + 50 * 60)
        #expect(cache.signingCount == 3)
    }

    @Test(
        "tokens declared expired before any request with them was accepted are counted in a row; an accepted one resets"
    )
    func expiredOnFirstUseCount() throws {
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock)
        var token = try cache.currentToken()
        for expected in 1...3 {
            clock.now += 1
            guard case .refreshed(let fresh) = try cache.invalidate(serial: token.serial) else {
                Issue.record("not re-signed")
                return
            }
            #expect(cache.tokensExpiredOnFirstUse == expected)
            #expect(cache.lastExpiredToken == token)
            // Late answers for the replaced token neither sign nor count.
            _ = try cache.invalidate(serial: token.serial)
            #expect(cache.tokensExpiredOnFirstUse == expected)
            token = fresh
        }
        cache.accepted(serial: token.serial - 1)  // an answer for an older token proves nothing about this one
        #expect(cache.tokensExpiredOnFirstUse == 3)
        cache.accepted(serial: token.serial)
        #expect(cache.tokensExpiredOnFirstUse == 0)
        // A token that worked and later expired is a normal expiry, not a clock problem.
        _ = try cache.invalidate(serial: token.serial)
        #expect(cache.tokensExpiredOnFirstUse == 0)
        #expect(cache.signingCount == 5)
    }

    @Test(
        "a week of random traffic and random ExpiredProviderToken answers: routine signings >= 20 minutes apart, no token older than the interval",
        arguments: [1200, 3000, 3600] as [Int64])
    func simulatedRun(interval: Int64) throws {
        var random = SplitMix64(seed: UInt64(interval))
        let clock = DrivenClock(Self.start)
        let cache = try cache(clock, interval: interval)
        var previousSigning: Int64?
        var routine = 0
        var forced = 0
        var current: ProviderToken?
        var served: [ProviderToken] = []
        while clock.now < Self.start + 7 * 86_400 {
            clock.now += Int64.random(in: 0...90, using: &random)
            let token = try cache.currentToken()
            if token != current {
                // A routine refresh: due `interval` after the previous signing, whatever caused that one.
                if let previousSigning {
                    try #require(token.issuedAt - previousSigning >= interval, "routine re-sign too soon")
                    try #require(token.issuedAt - previousSigning >= 20 * 60)
                }
                previousSigning = token.issuedAt
                current = token
                routine += 1
            }
            let age = clock.now - token.issuedAt
            try #require(age >= 0 && age < interval && age < 3600, "served a token \(age) seconds old")
            served.append(token)
            if served.count > 50 { served.removeFirst() }
            // Now and then APNs calls a token expired: the one just used, or one used a while ago.
            if Int.random(in: 0..<40, using: &random) == 0 {
                let reported = served[Int.random(in: 0..<served.count, using: &random)]
                switch try cache.invalidate(token: reported) {
                case .refreshed(let fresh):
                    forced += 1
                    #expect(reported == token && fresh.issuedAt == clock.now)
                    previousSigning = fresh.issuedAt
                    current = fresh
                case .alreadyReplaced(let now):
                    #expect(reported != token && now == token)
                }
            }
        }
        #expect(routine + forced == cache.signingCount)
        #expect(forced > 0 && routine > 1, "the run must meet both kinds of signing")
    }

    /// A cache on two driven clocks: the wall clock the `iat` comes from, and the uptime clock ages are counted on.
    private func cache(wall: DrivenClock, uptime: DrivenClock) throws -> ProviderTokenCache {
        try ProviderTokenCache(signer: signer, clock: { wall.now }, uptime: { uptime.now })
    }

    @Test(
        "a wall-clock step back of hours does not keep a token past its refresh: ages are counted on the uptime clock",
        arguments: [-3 * 3600, -26 * 3600] as [Int64])
    func wallStepBack(step: Int64) throws {
        let wall = DrivenClock(Self.start)
        let uptime = DrivenClock(1000)
        let cache = try cache(wall: wall, uptime: uptime)
        let first = try cache.currentToken()
        #expect(first.issuedAt == Self.start)
        wall.now += 10 * 60 + step  // ten minutes on, the NTP step lands
        uptime.now += 10 * 60
        #expect(try cache.currentToken() == first)
        wall.now += 40 * 60
        uptime.now += 40 * 60  // 50 minutes since the signing, by the uptime clock
        let second = try cache.currentToken()
        #expect(second.serial == 2)
        #expect(second.issuedAt == Self.start + 50 * 60 + step)  // the iat is the wall clock's, stepped as it is
        #expect(try cache.currentSerial() == 2 && cache.signingCount == 2)
    }

    @Test(
        "a wall-clock step forward of hours re-signs nothing early: no TooManyProviderTokenUpdates, no iat per request",
        arguments: [3 * 3600, 26 * 3600] as [Int64])
    func wallStepForward(step: Int64) throws {
        let wall = DrivenClock(Self.start)
        let uptime = DrivenClock(1000)
        let cache = try cache(wall: wall, uptime: uptime)
        let first = try cache.currentToken()
        wall.now += 60 + step
        uptime.now += 60
        for _ in 0..<100 {
            #expect(try cache.currentSerial() == first.serial)
            wall.now += 1
            uptime.now += 1
        }
        #expect(try cache.currentToken() == first)
        #expect(cache.signingCount == 1)
        uptime.now += 50 * 60
        wall.now += 50 * 60
        let second = try cache.currentToken()
        #expect(second.serial == 2 && second.issuedAt == wall.now)
    }

    @Test("the uptime clock moves on and counts in whole seconds")
    func systemUptimeMovesOn() {
        let first = ProviderTokenCache.systemUptime()
        #expect(first > 0)
        #expect(ProviderTokenCache.systemUptime() >= first)
    }

    @Test("the system clock the cache signs by is the wall clock in epoch seconds")
    func systemTimeIsEpochSeconds() {
        let before = Int64(Date().timeIntervalSince1970)
        let now = ProviderTokenCache.systemTime()
        let after = Int64(Date().timeIntervalSince1970)
        #expect(now >= before - 1 && now <= after + 1, "systemTime \(now), Date() \(before)...\(after)")
    }
}
