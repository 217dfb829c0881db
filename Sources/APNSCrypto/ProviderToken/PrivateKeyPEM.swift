/// A private key for TLS (a client certificate's key, the mock server's key): any algorithm OpenSSL reads
/// (`PRIVATE KEY`, `EC PRIVATE KEY`, `RSA PRIVATE KEY`, encrypted with a password), normalised to unencrypted
/// PKCS#8 so TLS code reloads it from `pkcs8DER` or `pem()`. Owns the decoded key; safe to share between threads.
public struct PrivateKeyPEM: Sendable {
    let key: OpenSSLKey
    /// The key as unencrypted PKCS#8 DER.
    public let pkcs8DER: [UInt8]

    /// Loads the first private key of PEM text; `password` opens an encrypted one.
    public init(pem: String, password: String? = nil) throws(CryptoError) {
        try self.init(key: PEMKeyReader.privateKey(pem: Array(pem.utf8), password: password))
    }

    /// Loads the first private key of a PEM file; errors name the path.
    public init(contentsOfFile path: String, password: String? = nil) throws(CryptoError) {
        self = try FileBytes.decode(path) { bytes throws(CryptoError) in
            try Self(key: PEMKeyReader.privateKey(pem: bytes, password: password))
        }
    }

    init(key: OpenSSLKey) throws(CryptoError) {
        self.key = key
        pkcs8DER = try key.privateKeyPKCS8DER()
    }

    /// A fresh P-256 key.
    public static func generateP256() throws(CryptoError) -> PrivateKeyPEM {
        try PrivateKeyPEM(key: OpenSSLKey.generateP256())
    }

    /// `EC P-256`, `RSA 2048-bit`, ...
    public var algorithm: String { key.summary }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public func pem() throws(CryptoError) -> String {
        try OpenSSLPEM.encode(label: "PRIVATE KEY", der: pkcs8DER)
    }

    /// Whether this is the private key of `certificate`.
    public func matches(_ certificate: X509Certificate) -> Bool {
        guard let certificateKey = try? OpenSSLCertificate(der: certificate.der).publicKey() else { return false }
        return key.hasSamePublicKey(as: certificateKey)
    }
}
