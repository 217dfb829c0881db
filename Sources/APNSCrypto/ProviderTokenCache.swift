import Foundation

/// The one provider token a team's connections share, and the policy for re-signing it (seeds 000, 001):
///
/// - it re-signs when the token is `refreshIntervalSeconds` old (default 50 minutes, allowed 20...60), so no
///   token older than 60 minutes is ever served and APNs never answers `ExpiredProviderToken` for age alone;
/// - it never signs twice within 20 minutes (`minimumRefreshIntervalSeconds`), which APNs punishes with
///   `TooManyProviderTokenUpdates`, not even when asked to by `invalidate(token:)`.
///
/// All times come from the injected clock (UNIX epoch seconds), so the policy is tested with a driven clock.
///
/// Not thread-safe and not `Sendable`: it belongs to the one event-loop thread that drives all connections,
/// which asks for the token when it renders requests; no lock is taken on that hot path.
public final class ProviderTokenCache {
    /// Returns the current time in UNIX epoch seconds.
    public typealias Clock = () -> Int64

    /// APNs rejects token updates more frequent than this (seconds).
    public static let minimumRefreshIntervalSeconds: Int64 = 20 * 60
    /// APNs rejects tokens older than this (seconds).
    public static let maximumRefreshIntervalSeconds: Int64 = 60 * 60
    /// The refresh interval established clients use (seconds).
    public static let defaultRefreshIntervalSeconds: Int64 = 50 * 60

    /// The wall clock: `Date()` in whole epoch seconds.
    public static func systemTime() -> Int64 {
        Int64(Date().timeIntervalSince1970)
    }

    public let signer: ProviderTokenSigner
    /// The age (seconds) at which the token is replaced.
    public let refreshIntervalSeconds: Int64
    private let clock: Clock
    private var token: ProviderToken?
    /// Set when an invalidation came too early: re-sign as soon as the minimum interval allows.
    private var refreshRequested = false
    /// How many tokens this cache has signed.
    public private(set) var signingCount = 0

    /// Throws `refreshIntervalOutOfRange` unless `refreshIntervalSeconds` is within 20...60 minutes.
    public init(
        signer: ProviderTokenSigner,
        refreshIntervalSeconds: Int64 = ProviderTokenCache.defaultRefreshIntervalSeconds,
        clock: @escaping Clock = ProviderTokenCache.systemTime
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
    }

    /// The token to send now. Signs the first token, and a new one once the current one is
    /// `refreshIntervalSeconds` old (or 20 minutes old after a refused invalidation). Throws only when signing
    /// fails (the previous token is then kept).
    public func currentToken() throws(CryptoError) -> ProviderToken {
        let now = clock()
        if let token {
            let age = now - token.issuedAt
            let due = age >= refreshIntervalSeconds || (refreshRequested && age >= Self.minimumRefreshIntervalSeconds)
            guard due else { return token }
        }
        return try sign(at: now)
    }

    /// Reports that APNs answered `ExpiredProviderToken` for `rejected`. Replaces the token only if `rejected` is
    /// still the current one and at least 20 minutes old; see `ProviderTokenInvalidation` for the other answers.
    /// Throws only when signing fails.
    public func invalidate(token rejected: ProviderToken) throws(CryptoError) -> ProviderTokenInvalidation {
        guard let current = token, current == rejected else { return .alreadyReplaced(try currentToken()) }
        let now = clock()
        let allowedAt = current.issuedAt + Self.minimumRefreshIntervalSeconds
        guard now >= allowedAt else {
            refreshRequested = true
            return .refreshNotYetAllowed(current: current, allowedAt: allowedAt)
        }
        return .refreshed(try sign(at: now))
    }

    private func sign(at now: Int64) throws(CryptoError) -> ProviderToken {
        let fresh = ProviderToken(jwtBytes: try signer.signBytes(issuedAt: now), issuedAt: now)
        token = fresh
        refreshRequested = false
        signingCount += 1
        return fresh
    }
}

@available(*, unavailable, message: "ProviderTokenCache belongs to the event-loop thread")
extension ProviderTokenCache: Sendable {}
