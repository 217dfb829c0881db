/// An APNs provider signing key: the P-256 private key of a `.p8` file (PKCS#8 PEM) from the developer account.
/// Owns the key (through an OpenSSL wrapper); immutable and safe to share between threads.
///
/// Loading says exactly what is wrong with a file that is not such a key: missing or unreadable (with the path),
/// not PEM, no private key in it (a certificate, a public key), password-protected, not EC (an RSA key), or EC on
/// another curve than P-256.
public struct ProviderKey: Sendable {
    let key: OpenSSLKey

    /// Loads the key from a `.p8` file.
    public init(contentsOfFile path: String) throws(CryptoError) {
        self = try FileBytes.decode(path) { bytes throws(CryptoError) in try ProviderKey(pemBytes: bytes) }
    }

    /// Loads the key from PEM text (`-----BEGIN PRIVATE KEY-----`; SEC 1 `EC PRIVATE KEY` is accepted too).
    public init(pem: String) throws(CryptoError) {
        try self.init(pemBytes: Array(pem.utf8))
    }

    init(pemBytes: [UInt8]) throws(CryptoError) {
        try self.init(checking: PEMKeyReader.privateKey(pem: pemBytes))
    }

    private init(checking key: OpenSSLKey) throws(CryptoError) {
        try key.requireP256()
        self.key = key
    }

    /// A fresh random P-256 key (for tests and the mock server; real keys come from Apple).
    public static func generate() throws(CryptoError) -> ProviderKey {
        try ProviderKey(checking: OpenSSLKey.generateP256())
    }

    /// The public half, to verify tokens signed with this key.
    public var publicKey: ProviderPublicKey { ProviderPublicKey(key: key) }

    /// The public half as PEM (`-----BEGIN PUBLIC KEY-----`, DER SubjectPublicKeyInfo).
    public func publicKeyPEM() throws(CryptoError) -> String {
        try publicKey.pem()
    }

    /// The private key as unencrypted PKCS#8 PEM, the format of a `.p8` file.
    public func pkcs8PEM() throws(CryptoError) -> String {
        try OpenSSLPEM.encode(label: "PRIVATE KEY", der: key.privateKeyPKCS8DER())
    }
}
