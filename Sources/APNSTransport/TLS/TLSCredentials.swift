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

    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool { lhs.rawValue < rhs.rawValue }

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
