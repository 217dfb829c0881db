/// The certificates of a PEM file, in file order: a server or client certificate followed by its intermediates,
/// a CA bundle, or a single certificate. Holds DER bytes only, so TLS code reloads them as it needs.
public struct CertificateChain: Sendable, Hashable {
    /// The certificates, in the order of the file. Never empty.
    public let certificates: [X509Certificate]

    /// Every `CERTIFICATE` block of PEM text. Throws `notPEM` for text without PEM, `noCertificates` when there is
    /// PEM but no certificate in it, `malformedCertificate` for a certificate block OpenSSL cannot decode.
    public init(pem: String) throws(CryptoError) {
        try self.init(pemBytes: Array(pem.utf8))
    }

    /// Every certificate of a PEM file (see `init(pem:)`); errors name the path.
    public init(contentsOfFile path: String) throws(CryptoError) {
        self = try FileBytes.decode(path) { bytes throws(CryptoError) in try CertificateChain(pemBytes: bytes) }
    }

    /// A chain of already parsed certificates; throws `noCertificates` for an empty list.
    public init(certificates: [X509Certificate]) throws(CryptoError) {
        guard !certificates.isEmpty else { throw CryptoError.noCertificates.with(context: "an empty chain") }
        self.certificates = certificates
    }

    init(pemBytes: [UInt8]) throws(CryptoError) {
        let blocks = try OpenSSLPEM.blocks(in: pemBytes)
        guard !blocks.isEmpty else {
            throw CryptoError.notPEM.with(context: "expected -----BEGIN CERTIFICATE----- blocks")
        }
        var certificates: [X509Certificate] = []
        for block in blocks where block.label == "CERTIFICATE" || block.label == "X509 CERTIFICATE" {
            do {
                certificates.append(try X509Certificate(der: block.der))
            } catch {
                throw error.with(context: "certificate \(certificates.count + 1): \(error.context)")
            }
        }
        guard !certificates.isEmpty else {
            let labels = blocks.map(\.label).joined(separator: ", ")
            throw CryptoError.noCertificates.with(context: "found \(labels), expected CERTIFICATE")
        }
        self.certificates = certificates
    }

    /// The first certificate: the leaf of a certificate-plus-intermediates file.
    public var leaf: X509Certificate { certificates[0] }

    /// The DER bytes of every certificate, in order.
    public var ders: [[UInt8]] { certificates.map(\.der) }

    /// The chain as concatenated PEM blocks.
    public func pem() throws(CryptoError) -> String {
        var text = ""
        for certificate in certificates { text += try certificate.pem() }
        return text
    }
}
