/// The contents of a PKCS#12 archive (`.p12`, the usual form of an APNs client certificate): the certificate, its
/// private key, and any further (CA) certificates, as plain values that TLS code reloads.
public struct PKCS12Bundle: Sendable {
    /// The archive's certificate (the one its key belongs to).
    public let certificate: X509Certificate
    /// The certificate's private key.
    public let privateKey: PrivateKeyPEM
    /// The other certificates in the archive (intermediates, CAs), possibly none.
    public let chain: [X509Certificate]

    /// Opens DER archive bytes. Throws `malformedPKCS12`, `wrongPassword` (the archive's integrity check failed),
    /// `incompletePKCS12` (no key or no certificate), or `keyDoesNotMatchCertificate`.
    public init(der: [UInt8], password: String) throws(CryptoError) {
        let contents = try OpenSSLPKCS12.parse(der: der, password: password)
        certificate = try X509Certificate(contents.certificate, der: contents.certificate.der())
        privateKey = try PrivateKeyPEM(key: contents.key)
        var chain: [X509Certificate] = []
        for member in contents.chain { chain.append(try X509Certificate(member, der: member.der())) }
        self.chain = chain
        guard privateKey.matches(certificate) else {
            throw CryptoError.keyDoesNotMatchCertificate.with(context: "the archive's key is not its certificate's key")
        }
    }

    /// Opens a `.p12` file; errors name the path.
    public init(contentsOfFile path: String, password: String) throws(CryptoError) {
        self = try FileBytes.decode(path) { bytes throws(CryptoError) in
            try PKCS12Bundle(der: bytes, password: password)
        }
    }
}
