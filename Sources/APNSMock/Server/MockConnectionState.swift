import APNSCore

/// Everything the mock remembers about one client connection: whether it has authenticated (and so got its full
/// stream limit), the team bound to it, its current provider token (verified once, then recognised by its bytes),
/// its request counts, and whether a GOAWAY or drop has ended it. The glue keeps one per connection and passes it
/// `inout` to `MockValidator.handle`.
public struct MockConnectionState: Sendable {
    /// A provider token this connection has verified: its exact `authorization` header bytes, JWT and claims.
    struct VerifiedToken: Sendable {
        let authorization: [UInt8]
        let jwt: [UInt8]
        let keyID: String
        let teamID: String
        let issuedAt: Int64
    }

    /// The connection's id, for counters and logs.
    public let id: Int
    /// The client certificate presented in the TLS handshake; nil without one.
    public let clientCertificate: MockClientCertificate?

    /// Whether a request with a valid provider token (or over a client certificate) has gone through.
    public internal(set) var isAuthenticated = false
    /// The SETTINGS_MAX_CONCURRENT_STREAMS currently announced to the client.
    public internal(set) var streamLimit: Int
    /// The team bound to this connection by its first valid token: one team per connection.
    public var teamID: String? { boundTeamID }
    /// Requests handed to the validator on this connection (answered, refused or dropped).
    public internal(set) var requestCount = 0
    /// Requests answered on this connection.
    public internal(set) var answeredCount = 0
    /// Times the provider token changed on this connection (the first token is not a change).
    public internal(set) var tokenChangeCount = 0
    /// The highest stream id answered on this connection (0 before the first answer).
    public internal(set) var highestAnsweredStreamID: Int32 = 0
    /// The last-stream-id of the GOAWAY sent on this connection, if one was.
    public internal(set) var goawayLastStreamID: Int32?
    /// Whether the connection was dropped.
    public internal(set) var isDropped = false

    var boundTeamID: String?
    /// The token currently in use, and the one it replaced (still honoured for requests rendered before the change).
    var currentToken: VerifiedToken?
    var previousToken: VerifiedToken?
    /// Set after an injected `ExpiredProviderToken`: the next token change skips the 20-minute rule.
    var tokenRefreshPermitted = false
    /// The last topic and push type accepted on this connection, so a campaign's single topic is checked once
    /// (the team is fixed per connection and the certificate per handshake, so only the kind of credential varies).
    var acceptedTopic: [UInt8] = []
    var acceptedTopicByToken = false
    var acceptedTopicPushTypeHeader: [UInt8] = []
    var acceptedTopicPushType: PushType?

    /// The `iat` of the token currently in use.
    public var currentTokenIssuedAt: Int64? { currentToken?.issuedAt }
    /// The key id of the token currently in use.
    public var currentKeyID: String? { currentToken?.keyID }

    /// A fresh connection. `initialStreamLimit` is what the glue announced in its first SETTINGS.
    public init(id: Int, clientCertificate: MockClientCertificate? = nil, initialStreamLimit: Int) {
        self.id = id
        self.clientCertificate = clientCertificate
        self.streamLimit = initialStreamLimit
    }
}
