/// The public half of a provider signing key (P-256), used to verify ES256 provider tokens (the mock server holds
/// one per configured key id). Immutable and safe to share between threads.
public struct ProviderPublicKey: Sendable {
    let key: OpenSSLKey

    init(key: OpenSSLKey) {
        self.key = key
    }

    /// Loads a public key from PEM text (`-----BEGIN PUBLIC KEY-----`); it must be EC on P-256.
    public init(pem: String) throws(CryptoError) {
        try self.init(pemBytes: Array(pem.utf8))
    }

    /// Loads a public key from a PEM file; it must be EC on P-256.
    public init(contentsOfFile path: String) throws(CryptoError) {
        self = try FileBytes.decode(path) { bytes throws(CryptoError) in try ProviderPublicKey(pemBytes: bytes) }
    }

    private init(pemBytes: [UInt8]) throws(CryptoError) {
        let key = try PEMKeyReader.publicKey(pem: pemBytes)
        try key.requireP256()
        self.key = key
    }

    /// The key as PEM (`-----BEGIN PUBLIC KEY-----`).
    public func pem() throws(CryptoError) -> String {
        try OpenSSLPEM.encode(label: "PUBLIC KEY", der: key.publicKeyDER())
    }

    /// The key as DER SubjectPublicKeyInfo.
    public func subjectPublicKeyInfoDER() throws(CryptoError) -> [UInt8] {
        try key.publicKeyDER()
    }

    /// Whether `signature`, a raw 64-byte `r||s` (the JWS form, not DER), is a valid ES256 signature of `message`
    /// (for a JWS: the ASCII bytes `base64url(header).base64url(claims)`). Malformed signatures are not valid.
    public func isValidSignature(_ signature: some Collection<UInt8>, for message: some Collection<UInt8>) -> Bool {
        key.verifyES256(rawSignature: signature, message: message)
    }
}
