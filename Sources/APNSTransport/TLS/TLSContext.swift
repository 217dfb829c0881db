import APNSCrypto

/// A client TLS context: the configuration loaded into OpenSSL once (trust store, client certificate, ALPN,
/// cipher policy), shared by every connection the pool opens. Building it reads files and may fail; do it at
/// start-up, not on the event loop's hot path.
public final class TLSClientContext: Sendable {
    /// The settings the context was made from.
    public let configuration: TLSClientConfiguration
    let context: TLSContextOpenSSL

    /// Loads `configuration`. Pins are parsed with `SPKIPin` (so curl's `sha256//` prefix is accepted) and kept
    /// normalized; a malformed pin is a configuration error.
    public init(_ configuration: TLSClientConfiguration) throws(TransportError) {
        var normalized = configuration
        normalized.pinnedSPKISHA256 = []
        for text in configuration.pinnedSPKISHA256 {
            do throws(CryptoError) {
                normalized.pinnedSPKISHA256.append(try SPKIPin(text).base64)
            } catch {
                throw TransportError(.invalidConfiguration, "pin: \(error)")
            }
        }
        self.configuration = normalized
        context = try TLSContextOpenSSL(client: normalized)
    }
}

/// A server TLS context: identity, ALPN selection and client-certificate policy loaded into OpenSSL once, shared
/// by every accepted connection (the mock server).
public final class TLSServerContext: Sendable {
    /// The settings the context was made from.
    public let configuration: TLSServerConfiguration
    let context: TLSContextOpenSSL

    /// A server context; throws when the certificate, key or trust roots do not load.
    public init(_ configuration: TLSServerConfiguration) throws(TransportError) {
        self.configuration = configuration
        context = try TLSContextOpenSSL(server: configuration)
    }
}

// MARK: - TLSClientConfiguration

/// How a client connects: what it trusts, what it pins, what it presents, what it offers. The policy follows
/// App Transport Security: TLS 1.2 or later, forward-secret AEAD cipher suites, certificate and host name
/// verification, optional SPKI pins; plus ALPN `h2`, which APNs requires. Plain values: build a
/// `TLSClientContext` from it once and share that across connections.
public struct TLSClientConfiguration: Sendable, Hashable {
    /// What server certificates must chain to. Default: the system store.
    public var trustRoots: TLSTrustRoots
    /// `SPKI-SHA256-BASE64` pins (the base64 SHA-256 of a certificate's DER SubjectPublicKeyInfo, on the leaf
    /// or a CA). Empty: no pinning. Otherwise a connection is refused unless some certificate in the server's
    /// presented or verified chain matches one of them. Pin more than one key so a rotation cannot lock you out.
    public var pinnedSPKISHA256: [String]
    /// A client certificate (certificate-based trust), or nil.
    public var identity: TLSIdentity?
    /// Versions, cipher suites and ALPN offered (the server must select one of the protocols, or the connection
    /// fails); its timeout also bounds the proxy CONNECT exchange.
    public var handshake: TLSHandshakeSettings
    /// Seconds each address gets to accept the TCP connect (the addresses race: `SocketConnector`).
    public var connectTimeout: Double

    /// Client settings; every one has a default.
    public init(
        trustRoots: TLSTrustRoots = .system,
        pinnedSPKISHA256: [String] = [],
        identity: TLSIdentity? = nil,
        handshake: TLSHandshakeSettings = TLSHandshakeSettings(),
        connectTimeout: Double = 10
    ) {
        self.trustRoots = trustRoots
        self.pinnedSPKISHA256 = pinnedSPKISHA256
        self.identity = identity
        self.handshake = handshake
        self.connectTimeout = connectTimeout
    }
}

// MARK: - TLSServerConfiguration

/// How a server (the mock APNs) accepts TLS: its identity, whether it asks for client certificates, what it
/// negotiates. Build a `TLSServerContext` from it once.
public struct TLSServerConfiguration: Sendable, Hashable {
    /// The server's certificate chain and key.
    public var identity: TLSIdentity
    /// Whether the server asks for client certificates and which it accepts.
    public var clientCertificates: TLSClientCertificatePolicy
    /// Versions, cipher suites and the protocols selected with ALPN, in preference order (empty: the server
    /// ignores ALPN, like a server that does not speak HTTP/2; clients requiring h2 must refuse it).
    public var handshake: TLSHandshakeSettings

    /// Server settings from the identity it presents and its policy on client certificates.
    public init(
        identity: TLSIdentity,
        clientCertificates: TLSClientCertificatePolicy = .none,
        handshake: TLSHandshakeSettings = TLSHandshakeSettings()
    ) {
        self.identity = identity
        self.clientCertificates = clientCertificates
        self.handshake = handshake
    }
}

// MARK: - TLSHandshakeSettings

/// What both ends of a connection negotiate with, and how long the handshake may take. The defaults follow App
/// Transport Security (TLS 1.2 or later, forward-secret AEAD cipher suites) plus ALPN `h2`, which APNs requires.
public struct TLSHandshakeSettings: Sendable, Hashable {
    /// The TLS 1.2 cipher suites App Transport Security accepts: ECDHE key exchange (forward secrecy) with AES-GCM
    /// or ChaCha20-Poly1305. TLS 1.3 suites are all forward-secret and keep OpenSSL's defaults.
    public static let forwardSecretCipherList =
        "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305"

    /// ALPN: a client offers these, a server selects one of them.
    public var applicationProtocols = ["h2"]
    /// The oldest TLS version accepted.
    public var minimumVersion = TLSVersion.tls1_2
    /// The newest TLS version offered.
    public var maximumVersion = TLSVersion.tls1_3
    /// TLS 1.2 cipher suites, in OpenSSL syntax.
    public var cipherList = TLSHandshakeSettings.forwardSecretCipherList
    /// Seconds allowed for the handshake.
    public var timeout: Double = 10

    /// The defaults; change what a connection needs otherwise.
    public init() {}
}

// MARK: - TLSCredentials

/// Where the certificates that anchor verification come from.
public enum TLSTrustRoots: Sendable, Hashable {
    /// The system trust store (`SSL_CTX_set_default_verify_paths`): the default, and what real APNs needs.
    case system
    /// Only the CA certificates in this PEM file (`--ca-file`), instead of the system store.
    case pemFile(path: String)
    /// Only the CA certificates in this PEM text (generated test CAs).
    case pem(String)
}

/// A certificate chain and its private key, presented to the peer (a server's identity, or a client
/// certificate for APNs certificate-based trust). Loaded once, when a context is built.
public enum TLSIdentity: Sendable, Hashable {
    /// PEM files: the chain (leaf first, then intermediates) and the key (optionally encrypted).
    case pemFiles(certificateChainPath: String, privateKeyPath: String, passphrase: String? = nil)
    /// PEM text.
    case pem(certificateChain: String, privateKey: String, passphrase: String? = nil)
    /// A PKCS#12 (.p12) file, as Keychain Access exports it (legacy RC2/3DES encryption is supported).
    case pkcs12File(path: String, password: String)
    /// PKCS#12 bytes.
    case pkcs12(bytes: [UInt8], password: String)
}

/// A TLS protocol version.
public enum TLSVersion: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
    case tls1_2 = 0x0303
    case tls1_3 = 0x0304

    /// Whether `lhs` is the older version.
    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The version's OpenSSL name, `TLSv1.2` or `TLSv1.3`.
    public var description: String { self == .tls1_2 ? "TLSv1.2" : "TLSv1.3" }
}

/// Whether a server asks for a client certificate, and what it verifies it against.
public enum TLSClientCertificatePolicy: Sendable, Hashable {
    /// No client certificate is requested.
    case none
    /// Requested; when presented it must verify against `trustRoots`; a client without one is accepted.
    case optional(trustRoots: TLSTrustRoots)
    /// Required, and it must verify against `trustRoots`; a client without one fails the handshake.
    case required(trustRoots: TLSTrustRoots)
}
