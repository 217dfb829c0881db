import APNSCore
import APNSCrypto
import APNSHTTP2

/// Everything the connection pool needs to reach APNs: where, how many connections, how to prove who we are,
/// what to trust, and the timing of timeouts, pings and reconnects.
public struct APNSClientConfiguration: Sendable {
    /// How the provider proves who it is.
    public enum Authentication: Sendable {
        /// Token-based trust: a JWT signed with the team's .p8 key, shared by all connections.
        case providerToken(ProviderTokenSigner, refreshIntervalSeconds: Int64)
        /// Certificate-based trust: the client certificate is in `tls.identity`.
        case certificate
    }

    /// The APNs server to connect to.
    public var endpoint: APNSEndpoint
    /// How requests are authenticated: a provider token or a client certificate.
    public var authentication: Authentication
    /// The TLS settings of each connection.
    public var tls: TLSClientConfiguration
    /// The HTTP proxy to tunnel through; nil connects directly.
    public var proxy: ProxyConfiguration?
    /// Addresses to dial instead of resolving a name (`--resolve`): the endpoint's, or the proxy's with a proxy.
    public var resolve = ResolveOverrides()
    /// Seconds a connect attempt has before the next address is dialed too (Happy Eyeballs, RFC 8305).
    public var connectAttemptDelay = 0.25
    /// Persistent connections at most. The pool widens rather than deepens: no connection carries more than
    /// `streamsPerConnection` requests (what a dropped one puts in doubt); `initialConnections` open at the start,
    /// `connectionStagger` seconds apart, and more as what is in flight grows (room kept for eight times as much, up
    /// to one share beyond what the sender expects: `expectInFlight`), so warm spares are ready before they are
    /// needed. Requests in flight are at most
    /// `maximumConnections × streamsPerConnection`.
    public var maximumConnections = 32
    /// Connections opened at the start.
    public var initialConnections = 3
    /// Every this many seconds the last connection opened, when it carried no request since the last check and the
    /// others keep the room the pool wants without it (one connection's share for a drop at least), closes; its
    /// place opens again when the load needs it. Nil (or a value not above 0) keeps every connection open until the
    /// pool closes.
    public var closeIdleConnectionsAfter: Double? = 15
    /// The most streams used on each connection.
    public var streamsPerConnection = 128
    /// Seconds between opening one connection and the next.
    public var connectionStagger = 0.1
    /// A request without an answer after this many seconds is cancelled (RST_STREAM CANCEL) and reported in
    /// doubt; its connection and the other requests on it carry on.
    public var requestTimeout = 30.0
    /// After this many seconds without reading anything, a PING checks the connection is alive.
    public var pingInterval = 30.0
    /// A PING unanswered this long marks the connection dead.
    public var pingTimeout = 10.0
    /// The server's HTTP/2 SETTINGS not arrived this many seconds after the TLS handshake: the connection failed.
    public var settingsTimeout = 5.0
    /// Requests open and none answered or ended by the server for this many seconds (a stalled, dripping or
    /// flow-control-starved server): the connection failed. Requests whose body never left are sent elsewhere.
    public var stallTimeout = 5.0
    /// Connections failing in a row over the pool (each ended without an answer: refused, a failed handshake, no
    /// SETTINGS, a stall, a protocol error), with no answer in between and no connection answering, end the
    /// campaign once the row has lasted this many seconds and a connection opened after that fails too (every slot
    /// tries once more when it ends): a brief outage is ridden out, a broken server ends the run within a minute
    /// whatever the pool's size.
    public var failureWindow = 20.0
    /// Back-off between reconnects of one connection (its `maximumAttempts` is not used: `failureWindow` decides).
    public var reconnect = ExponentialBackoff.connections
    /// Our ceiling on streams per connection, whatever the server allows.
    public var maximumStreamsPerConnection = 1000
    /// The highest stream id a connection uses before it drains and a replacement opens (see
    /// `HTTP2ClientConfiguration.lastStreamID`); tests set it low.
    public var lastStreamID = HTTP2ClientConfiguration.defaultLastStreamID
    /// Provider tokens in a row that APNs may declare expired on their first use before the pool gives up with
    /// `providerTokenRejected` (the host's clock is probably wrong). The CLI passes `--stop-after`.
    public var stopAfterTokensExpiredOnFirstUse = 5

    /// A configuration for `endpoint`; the other settings have defaults.
    public init(
        endpoint: APNSEndpoint, authentication: Authentication, tls: TLSClientConfiguration = TLSClientConfiguration()
    ) {
        self.endpoint = endpoint
        self.authentication = authentication
        self.tls = tls
    }
}
