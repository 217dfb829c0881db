/// A throwaway certificate authority for tests and the mock server: an EC P-256 CA key and self-signed CA
/// certificate (`CA:TRUE`), which issues P-256 leaf certificates for DNS names and IP addresses (subjectAltName),
/// for TLS servers, clients or both. Everything is returned as plain values and PEM strings. Generated test
/// material only: certificates are valid from an hour ago for `validityDays`.
public struct TestCertificateAuthority: Sendable {
    /// What a leaf certificate is for (its extended key usage).
    public enum Usage: Sendable, Hashable {
        case server
        case client
        case serverAndClient
    }

    /// The CA certificate.
    public let certificate: X509Certificate
    /// The CA's private key.
    public let privateKey: PrivateKeyPEM
    /// The CA certificate as PEM, for a `-CAfile` or a trust-store file.
    public let certificatePEM: String

    /// A new CA with a fresh key.
    public init(commonName: String = "apns-bulk test CA", validityDays: Int = 30) throws(CryptoError) {
        let key = try OpenSSLKey.generateP256()
        let template = CertificateTemplate(
            subject: [("O", "apns-bulk generated test material"), ("CN", commonName)],
            validityDays: validityDays,
            extensions: [
                ("basicConstraints", "critical,CA:TRUE"),
                ("keyUsage", "critical,keyCertSign,cRLSign,digitalSignature"),
                ("subjectKeyIdentifier", "hash"),
            ]
        )
        let issued = try OpenSSLCertificateBuilder.issue(template, subjectKey: key, issuer: nil)
        try self.init(certificate: X509Certificate(issued, der: issued.der()), privateKey: PrivateKeyPEM(key: key))
    }

    /// A CA from its certificate and key, for example written to files by an earlier run.
    public init(certificatePEM: String, privateKeyPEM: String) throws(CryptoError) {
        let certificate = try CertificateChain(pem: certificatePEM).leaf
        let key = try PrivateKeyPEM(pem: privateKeyPEM)
        guard key.matches(certificate) else {
            throw CryptoError.keyDoesNotMatchCertificate.with(context: "the CA key is not the CA certificate's key")
        }
        try self.init(certificate: certificate, privateKey: key)
    }

    private init(certificate: X509Certificate, privateKey: PrivateKeyPEM) throws(CryptoError) {
        self.certificate = certificate
        self.privateKey = privateKey
        certificatePEM = try certificate.pem()
    }

    /// Issues a leaf certificate with a fresh P-256 key. `dnsNames` and `ipAddresses` (IPv4 or IPv6 text) go into
    /// subjectAltName; `userID` into the subject's UID attribute (an APNs client certificate's topic);
    /// `extraExtensions` as given. Throws `invalidCertificateRequest` for unusable names or addresses.
    public func issueLeaf(
        commonName: String,
        dnsNames: [String] = [],
        ipAddresses: [String] = [],
        userID: String? = nil,
        usage: Usage = .server,
        extraExtensions: [CertificateExtension] = [],
        validityDays: Int = 30
    ) throws(CryptoError) -> IssuedCertificate {
        let alternativeNames = try Self.subjectAlternativeNames(dnsNames: dnsNames, ipAddresses: ipAddresses)
        var subject: [(field: String, value: String)] = [("O", "apns-bulk generated test material")]
        if let userID { subject.append(("UID", userID)) }
        subject.append(("CN", commonName))
        var extensions: [(name: String, value: String)] = [
            ("basicConstraints", "critical,CA:FALSE"),
            ("keyUsage", "critical,digitalSignature"),
            ("extendedKeyUsage", Self.extendedKeyUsage(usage)),
            ("subjectKeyIdentifier", "hash"),
            ("authorityKeyIdentifier", "keyid:always"),
        ]
        if !alternativeNames.isEmpty { extensions.append(("subjectAltName", alternativeNames)) }
        extensions += extraExtensions.map { ($0.oid, $0.configurationValue) }

        let issuer = try OpenSSLCertificate(der: certificate.der)
        let leafKey = try OpenSSLKey.generateP256()
        let template = CertificateTemplate(subject: subject, validityDays: validityDays, extensions: extensions)
        let leaf = try OpenSSLCertificateBuilder.issue(template, subjectKey: leafKey, issuer: (issuer, privateKey.key))
        return try IssuedCertificate(
            certificate: X509Certificate(leaf, der: leaf.der()),
            privateKey: PrivateKeyPEM(key: leafKey),
            authority: certificate
        )
    }

    private static func extendedKeyUsage(_ usage: Usage) -> String {
        switch usage {
        case .server: "serverAuth"
        case .client: "clientAuth"
        case .serverAndClient: "serverAuth,clientAuth"
        }
    }

    /// `DNS:a,IP:b` after checking that no value can break out of OpenSSL's list syntax.
    private static func subjectAlternativeNames(dnsNames: [String], ipAddresses: [String]) throws(CryptoError) -> String
    {
        for name in dnsNames where name.isEmpty || !name.utf8.allSatisfy(isDNSByte) {
            throw CryptoError.invalidCertificateRequest.with(context: "\"\(name)\" is not a DNS name")
        }
        for address in ipAddresses where address.isEmpty || !address.utf8.allSatisfy(isIPByte) {
            throw CryptoError.invalidCertificateRequest.with(context: "\"\(address)\" is not an IP address")
        }
        return (dnsNames.map { "DNS:" + $0 } + ipAddresses.map { "IP:" + $0 }).joined(separator: ",")
    }

    private static func isDNSByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
            || byte == UInt8(ascii: "_")
    }

    private static func isIPByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}

// MARK: - IssuedCertificate

/// A leaf certificate issued by a `TestCertificateAuthority`, with its key, as values and as PEM.
public struct IssuedCertificate: Sendable {
    /// The issued certificate.
    public let certificate: X509Certificate
    /// The private key of the issued certificate, in PEM.
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
