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

    /// A token from its ASCII JWS bytes.
    init(jwtBytes: [UInt8], issuedAt: Int64) {
        jwt = String(decoding: jwtBytes, as: UTF8.self)
        var authorization = Array("bearer ".utf8)
        authorization.append(contentsOf: jwtBytes)
        self.authorization = authorization
        self.issuedAt = issuedAt
    }

    public var description: String { "ProviderToken(iat: \(issuedAt), jwt: \(jwt.prefix(24))...)" }
}

/// What `ProviderTokenCache.invalidate(token:)` did after APNs answered `ExpiredProviderToken`.
public enum ProviderTokenInvalidation: Sendable, Hashable {
    /// The rejected token was current and old enough to replace: this new token was signed. Retry with it.
    case refreshed(ProviderToken)
    /// The rejected token had already been replaced (another connection reported first, or the regular refresh
    /// happened): nothing was signed. Retry with this, the current token.
    case alreadyReplaced(ProviderToken)
    /// The rejected token is current but younger than 20 minutes: signing another now would draw
    /// `TooManyProviderTokenUpdates`, so nothing was signed and `current` stays in use. The cache re-signs at the
    /// first request for a token at or after `allowedAt` (epoch seconds) instead of waiting for the regular
    /// interval. APNs calling a young token expired usually means this host's clock is behind APNs's: the caller
    /// may hold the affected requests until `allowedAt`, or count these answers and stop the campaign.
    case refreshNotYetAllowed(current: ProviderToken, allowedAt: Int64)
}
