import APNSCrypto

/// What a completed handshake established: the negotiated protocol, version and cipher, and the peer's
/// certificates (the server's chain on a client; the client certificate, if any, on a server).
public struct TLSHandshakeInfo: Sendable, Hashable {
    /// The ALPN protocol selected ("h2"), nil when none was.
    public let applicationProtocol: String?
    /// "TLSv1.2" or "TLSv1.3".
    public let protocolVersion: String
    /// The cipher suite's OpenSSL name ("TLS_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES128-GCM-SHA256").
    public let cipherSuite: String
    /// The certificates the peer presented, leaf first. Empty when it presented none. On a resumed session, the
    /// ones it presented when the session was made (OpenSSL keeps them in the session).
    public let peerCertificates: [TLSPeerCertificate]
    /// Whether an earlier session was resumed (an abbreviated handshake: no certificate sent or checked again).
    public var resumed = false

    /// The peer's own certificate (the leaf).
    public var peerCertificate: TLSPeerCertificate? { peerCertificates.first }
}

/// One certificate the peer presented, decoded once at handshake time so the owner never touches OpenSSL:
/// the mock reads a client certificate's subject UID and Apple's push extensions from here.
public struct TLSPeerCertificate: Sendable, Hashable, CustomStringConvertible {
    /// The certificate, DER-encoded.
    public let der: [UInt8]
    /// The subject, RFC 2253 ("CN=Apple Push Services: com.example.app,O=…,UID=com.example.app").
    public let subject: String
    /// The issuer, RFC 2253.
    public let issuer: String
    /// The subject's common name (CN), if any.
    public let subjectCommonName: String?
    /// The subject's user ID (UID, OID 0.9.2342.19200300.100.1.1): the topic of an APNs client certificate.
    public let subjectUserID: String?
    /// The base64 SHA-256 of the DER SubjectPublicKeyInfo (`SPKI-SHA256-BASE64`), what pins match.
    public let spkiSHA256Base64: String
    /// Each extension's value (the contents of its OCTET STRING, DER) by dotted OID ("1.2.840.113635.100.6.3.6").
    public let extensions: [String: [UInt8]]

    /// The subject and the pin (not the DER), for logs and test output.
    public var description: String { "\(subject) [SPKI \(spkiSHA256Base64)]" }
}

extension TLSPeerCertificate {
    /// Reads `certificate` once, through the crypto layer's certificate owner; nil when it cannot be encoded.
    init?(_ certificate: OpenSSLCertificate) {
        guard let der = try? certificate.der(), let spki = try? certificate.subjectPublicKeyInfoDER(),
            let pin = try? SPKIPin(subjectPublicKeyInfoDER: spki)
        else { return nil }
        self.der = der
        spkiSHA256Base64 = pin.base64
        subject = certificate.subjectLine
        issuer = certificate.issuerLine
        subjectCommonName = certificate.subjectCommonName
        subjectUserID = certificate.subjectUserID
        extensions = certificate.extensions
    }
}
