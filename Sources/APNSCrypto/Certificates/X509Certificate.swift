/// One X.509 certificate as its DER bytes (the form TLS libraries load and pins hash), with the facts people and
/// pins need read out once: the subject, its common name, and the SPKI pin. A plain value, free of C types.
public struct X509Certificate: Sendable, Hashable {
    /// The certificate, DER-encoded.
    public let der: [UInt8]
    /// The subject as one RFC 2253 line, for example `CN=localhost,O=apns-bulk test`.
    public let subject: String
    /// The subject's common name (CN), if it has one.
    public let commonName: String?
    /// The SHA-256 of the certificate's DER SubjectPublicKeyInfo (`SPKI-SHA256-BASE64` when printed).
    public let spkiPin: SPKIPin

    /// Parses a DER certificate; throws `malformedCertificate` unless the bytes are exactly one certificate.
    public init(der: [UInt8]) throws(CryptoError) {
        try self.init(OpenSSLCertificate(der: der), der: der)
    }

    init(_ certificate: OpenSSLCertificate, der: [UInt8]) throws(CryptoError) {
        self.der = der
        subject = certificate.subjectLine
        commonName = certificate.subjectCommonName
        spkiPin = try SPKIPin(subjectPublicKeyInfoDER: certificate.subjectPublicKeyInfoDER())
    }

    /// The certificate as a PEM block (`-----BEGIN CERTIFICATE-----`).
    public func pem() throws(CryptoError) -> String {
        try OpenSSLPEM.encode(label: "CERTIFICATE", der: der)
    }

    /// A short label for people: the common name, else the subject line, else `(empty subject)`.
    public var label: String {
        commonName ?? (subject.isEmpty ? "(empty subject)" : subject)
    }
}
