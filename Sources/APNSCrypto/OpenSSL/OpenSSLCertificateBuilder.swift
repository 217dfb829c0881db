internal import COpenSSL

/// What a new certificate says: subject attributes (`CN`, `O`, `UID`, ...), validity, and X.509v3 extensions in
/// OpenSSL's configuration syntax (`basicConstraints` = `critical,CA:TRUE`; an OID with `DER:<hex>` for others).
struct CertificateTemplate {
    var subject: [(field: String, value: String)]
    var validityDays: Int
    var extensions: [(name: String, value: String)]
}

/// Builds and signs X.509 v3 certificates with OpenSSL (`X509_new`, `X509_set_pubkey`, `X509V3_EXT_nconf`,
/// `X509_sign` with SHA-256), for the test certificate authority.
enum OpenSSLCertificateBuilder {
    /// Clock skew tolerated by backdating `notBefore`.
    static let backdateSeconds = 3600

    /// Issues a certificate for `subjectKey`, signed by `issuer`, or self-signed with `subjectKey` when nil.
    static func issue(
        _ template: CertificateTemplate,
        subjectKey: OpenSSLKey,
        issuer: (certificate: OpenSSLCertificate, key: OpenSSLKey)?
    ) throws(CryptoError) -> OpenSSLCertificate {
        guard let pointer = X509_new() else { throw OpenSSLError.failure("X509_new") }
        let certificate = OpenSSLCertificate(taking: pointer)
        guard X509_set_version(pointer, 2) == 1 else { throw OpenSSLError.failure("X509_set_version") }
        try setRandomSerial(pointer)
        guard X509_gmtime_adj(X509_getm_notBefore(pointer), -backdateSeconds) != nil,
            X509_gmtime_adj(X509_getm_notAfter(pointer), template.validityDays * 86_400) != nil
        else { throw OpenSSLError.failure("X509_gmtime_adj") }

        let name = try subjectName(template.subject)
        defer { X509_NAME_free(name) }
        guard X509_set_subject_name(pointer, name) == 1 else { throw OpenSSLError.failure("X509_set_subject_name") }
        let issuerName = issuer.map { X509_get_subject_name($0.certificate.pointer) } ?? name
        guard X509_set_issuer_name(pointer, issuerName) == 1 else { throw OpenSSLError.failure("X509_set_issuer_name") }
        guard X509_set_pubkey(pointer, subjectKey.pointer) == 1 else { throw OpenSSLError.failure("X509_set_pubkey") }

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate.pointer ?? pointer, pointer, nil, nil, 0)
        for (extensionName, value) in template.extensions {
            guard let created = X509V3_EXT_nconf(nil, &context, extensionName, value) else {
                throw OpenSSLError.failure("extension \(extensionName)=\(value)", kind: .invalidCertificateRequest)
            }
            defer { X509_EXTENSION_free(created) }
            guard X509_add_ext(pointer, created, -1) == 1 else { throw OpenSSLError.failure("X509_add_ext") }
        }

        guard X509_sign(pointer, (issuer?.key ?? subjectKey).pointer, EVP_sha256()) > 0 else {
            throw OpenSSLError.failure("X509_sign")
        }
        return certificate
    }

    /// A random positive 127-bit serial number.
    private static func setRandomSerial(_ certificate: OpaquePointer) throws(CryptoError) {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else { throw OpenSSLError.failure("RAND_bytes") }
        bytes[0] &= 0x7F
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { throw OpenSSLError.failure("BN_bin2bn") }
        defer { BN_free(number) }
        // X509_get_serialNumber returns the certificate's own ASN1_INTEGER, which BN_to_ASN1_INTEGER fills in place.
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil else {
            throw OpenSSLError.failure("BN_to_ASN1_INTEGER")
        }
    }

    /// A new `X509_NAME` (the caller frees it) from attributes in order.
    private static func subjectName(_ attributes: [(field: String, value: String)]) throws(CryptoError) -> OpaquePointer
    {
        guard let name = X509_NAME_new() else { throw OpenSSLError.failure("X509_NAME_new") }
        for (field, value) in attributes {
            let bytes = Array(value.utf8)
            let added = bytes.withUnsafeBufferPointer { buffer in
                X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, buffer.baseAddress, Int32(buffer.count), -1, 0)
            }
            guard added == 1 else {
                X509_NAME_free(name)
                throw OpenSSLError.failure("subject \(field)=\(value)", kind: .invalidCertificateRequest)
            }
        }
        return name
    }
}
