/// How a client connects: what it trusts, what it pins, what it presents, what it offers. The policy follows
/// App Transport Security: TLS 1.2 or later, forward-secret AEAD cipher suites, certificate and host name
/// verification, optional SPKI pins; plus ALPN `h2`, which APNs requires. Plain values: build a
/// `TLSClientContext` from it once and share that across connections.
public struct TLSClientConfiguration: Sendable, Hashable {
    /// The TLS 1.2 cipher suites App Transport Security accepts: ECDHE key exchange (forward secrecy) with AES-GCM
    /// or ChaCha20-Poly1305. TLS 1.3 suites are all forward-secret and keep OpenSSL's defaults.
    public static let forwardSecretCipherList =
        "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305"

    /// What server certificates must chain to. Default: the system store.
    public var trustRoots: TLSTrustRoots
    /// `SPKI-SHA256-BASE64` pins (the base64 SHA-256 of a certificate's DER SubjectPublicKeyInfo, on the leaf
    /// or a CA). Empty: no pinning. Otherwise a connection is refused unless some certificate in the server's
    /// presented or verified chain matches one of them. Pin more than one key so a rotation cannot lock you out.
    public var pinnedSPKISHA256: [String]
    /// A client certificate (certificate-based trust), or nil.
    public var identity: TLSIdentity?
    /// Offered with ALPN; the server must select one of them, or the connection fails. Default `["h2"]`.
    public var applicationProtocols: [String]
    public var minimumVersion: TLSVersion
    public var maximumVersion: TLSVersion
    /// TLS 1.2 cipher suites, in OpenSSL syntax.
    public var cipherList: String
    /// Seconds allowed for the TCP connect (per attempt over all addresses).
    public var connectTimeout: Double
    /// Seconds allowed for the proxy CONNECT exchange and the TLS handshake, each.
    public var handshakeTimeout: Double

    public init(
        trustRoots: TLSTrustRoots = .system,
        pinnedSPKISHA256: [String] = [],
        identity: TLSIdentity? = nil,
        applicationProtocols: [String] = ["h2"],
        minimumVersion: TLSVersion = .tls1_2,
        maximumVersion: TLSVersion = .tls1_3,
        cipherList: String = TLSClientConfiguration.forwardSecretCipherList,
        connectTimeout: Double = 10,
        handshakeTimeout: Double = 10
    ) {
        self.trustRoots = trustRoots
        self.pinnedSPKISHA256 = pinnedSPKISHA256
        self.identity = identity
        self.applicationProtocols = applicationProtocols
        self.minimumVersion = minimumVersion
        self.maximumVersion = maximumVersion
        self.cipherList = cipherList
        self.connectTimeout = connectTimeout
        self.handshakeTimeout = handshakeTimeout
    }
}
