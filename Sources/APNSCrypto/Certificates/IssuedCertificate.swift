/// A leaf certificate issued by a `TestCertificateAuthority`, with its key, as values and as PEM.
public struct IssuedCertificate: Sendable {
    public let certificate: X509Certificate
    public let privateKey: PrivateKeyPEM
    /// The leaf certificate as PEM.
    public let certificatePEM: String
    /// The leaf's private key as unencrypted PKCS#8 PEM.
    public let privateKeyPEM: String
    /// The leaf then the CA certificate, as PEM: what a server sends.
    public let chainPEM: String

    init(certificate: X509Certificate, privateKey: PrivateKeyPEM, authority: X509Certificate) throws(CryptoError) {
        self.certificate = certificate
        self.privateKey = privateKey
        certificatePEM = try certificate.pem()
        privateKeyPEM = try privateKey.pem()
        chainPEM = try certificatePEM + authority.pem()
    }
}
