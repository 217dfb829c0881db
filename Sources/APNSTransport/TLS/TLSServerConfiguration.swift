/// How a server (the mock APNs) accepts TLS: its identity, the protocols it selects with ALPN, whether it asks
/// for client certificates. Build a `TLSServerContext` from it once.
public struct TLSServerConfiguration: Sendable, Hashable {
    /// The server's certificate chain and key.
    public var identity: TLSIdentity
    /// Protocols the server selects with ALPN, in preference order. Default `["h2"]`. Empty: the server ignores
    /// ALPN, like a server that does not speak HTTP/2 (clients requiring h2 must refuse it).
    public var applicationProtocols: [String]
    public var clientCertificates: TLSClientCertificatePolicy
    public var minimumVersion: TLSVersion
    public var maximumVersion: TLSVersion
    /// TLS 1.2 cipher suites, in OpenSSL syntax.
    public var cipherList: String
    /// Seconds a client gets to complete the handshake.
    public var handshakeTimeout: Double

    public init(
        identity: TLSIdentity,
        applicationProtocols: [String] = ["h2"],
        clientCertificates: TLSClientCertificatePolicy = .none,
        minimumVersion: TLSVersion = .tls1_2,
        maximumVersion: TLSVersion = .tls1_3,
        cipherList: String = TLSClientConfiguration.forwardSecretCipherList,
        handshakeTimeout: Double = 10
    ) {
        self.identity = identity
        self.applicationProtocols = applicationProtocols
        self.clientCertificates = clientCertificates
        self.minimumVersion = minimumVersion
        self.maximumVersion = maximumVersion
        self.cipherList = cipherList
        self.handshakeTimeout = handshakeTimeout
    }
}
