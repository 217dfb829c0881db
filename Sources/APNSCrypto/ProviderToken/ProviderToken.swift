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
