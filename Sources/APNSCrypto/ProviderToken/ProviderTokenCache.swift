import Foundation
internal import Glibc

/// The one provider token a team's connections share, and the policy for re-signing it (seeds 000, 001):
///
/// - routine refresh: it re-signs when the token is `refreshIntervalSeconds` old (default 50 minutes, allowed
///   20...60), so no token older than 60 minutes is ever served and routine refreshes are never less than 20
///   minutes apart (APNs punishes more frequent updates with `TooManyProviderTokenUpdates`). The age is counted
///   on the uptime clock (`CLOCK_BOOTTIME`: never stepped, counting a suspend), not from the `iat`: the `iat`
///   comes from the wall clock, which an NTP step can move by hours, and a step back would keep an expired token
///   in use, a step forward re-sign at once (docs/RUNNING.md, "Paused processes and clock steps");
/// - expiry answer: when APNs answers `ExpiredProviderToken` for the token in use, `invalidate(serial:)` re-signs
///   at once, whatever its age: APNs itself declared it dead, so the new token is not a "too soon" update. Only the
///   first answer for a token re-signs; answers for a token already replaced sign nothing;
/// - clock check: it counts the tokens in a row that APNs declared expired before accepting a single request
///   carrying them (`tokensExpiredOnFirstUse`). A freshly signed token that is expired on arrival means this
///   host's clock is wrong; the caller stops once the count reaches its limit.
///
/// Both clocks are injected (the wall clock in UNIX epoch seconds, the uptime clock in seconds), so the policy is
/// tested with driven clocks.
///
/// Not thread-safe and not `Sendable`: it belongs to the one event-loop thread that drives all connections,
/// which asks for the token when it renders requests; no lock is taken on that hot path.
public final class ProviderTokenCache {
    /// Returns the current time in UNIX epoch seconds.
    public typealias Clock = () -> Int64
    /// Returns seconds on a clock that moves on steadily, whatever the wall clock does (`systemUptime`).
    public typealias Uptime = () -> Int64

    /// APNs rejects routine token updates more frequent than this (seconds).
    public static let minimumRefreshIntervalSeconds: Int64 = 20 * 60
    /// APNs rejects tokens older than this (seconds).
    public static let maximumRefreshIntervalSeconds: Int64 = 60 * 60
    /// The refresh interval established clients use (seconds).
    public static let defaultRefreshIntervalSeconds: Int64 = 50 * 60

    /// The wall clock in whole epoch seconds: `time(2)`, which is all the resolution `iat` has; the pool asks once
    /// per request, and `Date()` cost a full clock read and Foundation's conversion each time.
    public static func systemTime() -> Int64 {
        Int64(time(nil))
    }

    /// Whole seconds since boot on `CLOCK_BOOTTIME`: monotonic, never stepped, and counting time suspended (a
    /// token ages while a laptop sleeps; `CLOCK_MONOTONIC` would stand still).
    public static func systemUptime() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return Int64(spec.tv_sec)
    }

    /// The signer that makes new tokens.
    public let signer: ProviderTokenSigner
    /// The age (seconds) at which the token is replaced.
    public let refreshIntervalSeconds: Int64
    private let clock: Clock
    private let uptime: Uptime
    private var token: ProviderToken?
    /// When the current token was signed, on the uptime clock: its age is judged from this.
    private var signedAtUptime: Int64 = 0
    /// Whether APNs accepted a request carrying the current token.
    private var currentAccepted = false
    /// How many tokens this cache has signed (the serial of the newest token).
    public private(set) var signingCount = 0
    /// Tokens in a row that APNs declared expired before accepting any request carrying them; 0 once a token is
    /// accepted.
    public private(set) var tokensExpiredOnFirstUse = 0
    /// The newest token APNs declared expired, if any.
    public private(set) var lastExpiredToken: ProviderToken?

    /// Throws `refreshIntervalOutOfRange` unless `refreshIntervalSeconds` is within 20...60 minutes.
    public init(
        signer: ProviderTokenSigner,
        refreshIntervalSeconds: Int64 = ProviderTokenCache.defaultRefreshIntervalSeconds,
        clock: @escaping Clock = ProviderTokenCache.systemTime,
        uptime: @escaping Uptime = ProviderTokenCache.systemUptime
    ) throws(CryptoError) {
        let allowed = Self.minimumRefreshIntervalSeconds...Self.maximumRefreshIntervalSeconds
        guard allowed.contains(refreshIntervalSeconds) else {
            throw CryptoError.refreshIntervalOutOfRange.with(
                context: "\(refreshIntervalSeconds) seconds; allowed \(allowed.lowerBound)...\(allowed.upperBound)"
            )
        }
        self.signer = signer
        self.refreshIntervalSeconds = refreshIntervalSeconds
        self.clock = clock
        self.uptime = uptime
    }

    /// The token to send now. Signs the first token, and a new one once the current one is
    /// `refreshIntervalSeconds` old. Throws only when signing fails (the previous token is then kept).
    public func currentToken() throws(CryptoError) -> ProviderToken {
        if let token, isFresh { return token }
        return try sign(at: clock())
    }

    /// The serial of the token to send now, signing as `currentToken()` does: what a per-request freshness check
    /// compares, without copying the token out.
    public func currentSerial() throws(CryptoError) -> Int {
        // Fields read through the optional, so the token (its JWT string and header bytes) is not copied.
        if let serial = token?.serial, isFresh { return serial }
        return try sign(at: clock()).serial
    }

    /// Whether the current token is younger than the refresh interval, on the uptime clock.
    private var isFresh: Bool {
        let age = uptime() - signedAtUptime
        return age >= 0 && age < refreshIntervalSeconds
    }

    /// Reports that APNs answered `ExpiredProviderToken` for `rejected`; see `invalidate(serial:)`.
    public func invalidate(token rejected: ProviderToken) throws(CryptoError) -> ProviderTokenInvalidation {
        try invalidate(serial: rejected.serial)
    }

    /// Reports that APNs answered `ExpiredProviderToken` for a request carrying the token numbered `serial`.
    /// Re-signs at once if that token is still the current one (whatever its age), else signs nothing. Throws
    /// only when signing fails.
    public func invalidate(serial: Int) throws(CryptoError) -> ProviderTokenInvalidation {
        guard let current = token, current.serial == serial else { return .alreadyReplaced(try currentToken()) }
        tokensExpiredOnFirstUse = currentAccepted ? 0 : tokensExpiredOnFirstUse + 1
        lastExpiredToken = current
        return .refreshed(try sign(at: clock()))
    }

    /// Reports that APNs accepted a request carrying the token numbered `serial` (any answer but
    /// `ExpiredProviderToken`): the clock check starts over.
    public func accepted(serial: Int) {
        guard !currentAccepted, let token, token.serial == serial else { return }
        currentAccepted = true
        tokensExpiredOnFirstUse = 0
    }

    /// When `tokensExpiredOnFirstUse` has reached `limit`: what that says about this host's clock, with the `iat`
    /// last sent and the local time, for the message that stops the campaign. Else nil.
    public func clockProblem(limit: Int) -> String? {
        guard tokensExpiredOnFirstUse >= max(1, limit), let rejected = lastExpiredToken else { return nil }
        let now = clock()
        let format = ISO8601DateFormatter()
        func show(_ seconds: Int64) -> String {
            "\(seconds) (\(format.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))))"
        }
        return "APNs declared \(tokensExpiredOnFirstUse) freshly signed provider tokens in a row expired on first use: "
            + "this host's clock is probably wrong (iat sent \(show(rejected.issuedAt)), local time \(show(now)))"
    }

    private func sign(at now: Int64) throws(CryptoError) -> ProviderToken {
        let fresh = ProviderToken(
            jwtBytes: try signer.signBytes(issuedAt: now), issuedAt: now, serial: signingCount + 1)
        token = fresh
        signedAtUptime = uptime()
        currentAccepted = false
        signingCount += 1
        return fresh
    }
}

@available(*, unavailable, message: "ProviderTokenCache belongs to the event-loop thread")
extension ProviderTokenCache: Sendable {}

// MARK: - ProviderToken

/// One signed provider token, ready to put on requests: the JWT, the complete `authorization` header value
/// (`bearer <jwt>`, built once so the transport does not rebuild it per request), and when it was issued.
/// Its `description` shows the issue time and the start of the JWT only: a token is a credential for an hour.
public struct ProviderToken: Sendable, Hashable, CustomStringConvertible {
    /// The compact JWS.
    public let jwt: String
    /// `bearer <jwt>` as ASCII bytes: the value of the `authorization` request header.
    public let authorization: [UInt8]
    /// The token's `iat`: UNIX epoch seconds at signing.
    public let issuedAt: Int64
    /// Which of its cache's tokens this is: 1 for the first signed, then counting up. Requests remember it, so an
    /// answer can be matched to the token it was sent with.
    public let serial: Int

    /// A token from its ASCII JWS bytes.
    init(jwtBytes: [UInt8], issuedAt: Int64, serial: Int) {
        jwt = String(decoding: jwtBytes, as: UTF8.self)
        var authorization = Array("bearer ".utf8)
        authorization.append(contentsOf: jwtBytes)
        self.authorization = authorization
        self.issuedAt = issuedAt
        self.serial = serial
    }

    /// The token's serial, issue time and the start of its JWT, never the whole token.
    public var description: String { "ProviderToken(#\(serial), iat: \(issuedAt), jwt: \(jwt.prefix(24))...)" }
}

/// What `ProviderTokenCache.invalidate(serial:)` did after APNs answered `ExpiredProviderToken`.
public enum ProviderTokenInvalidation: Sendable, Hashable {
    /// The rejected token was current: this new token was signed at once. Retry with it.
    case refreshed(ProviderToken)
    /// The rejected token had already been replaced (an earlier answer for it, or the routine refresh): nothing
    /// was signed. Retry with this, the current token.
    case alreadyReplaced(ProviderToken)
}
