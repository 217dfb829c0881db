internal import COpenSSL

/// Owns one `X509` certificate, freed with `X509_free` in `deinit`: the one certificate owner, for crypto and TLS
/// alike. Read-only after creation.
package final class OpenSSLCertificate {
    /// The `X509 *`. Borrowed by callers for the duration of a call.
    package let pointer: OpaquePointer

    /// Takes ownership of `pointer`: this object frees it.
    package init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Takes a reference of its own to `pointer` (`X509_up_ref`), which stays owned by its owner (a stack, a
    /// session); nil when that fails.
    package convenience init?(retaining pointer: OpaquePointer) {
        guard X509_up_ref(pointer) == 1 else { return nil }
        self.init(taking: pointer)
    }

    deinit {
        X509_free(pointer)
    }

    /// Decodes a DER certificate; the whole input must be one certificate.
    convenience init(der: [UInt8]) throws(CryptoError) {
        let certificate: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            guard let start = buffer.baseAddress, cursor == start + buffer.count else {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let certificate else {
            throw OpenSSLError.failure("decoding \(der.count) bytes of DER", kind: .malformedCertificate)
        }
        self.init(taking: certificate)
    }

    /// Every certificate of PEM text, in order (`PEM_read_bio_X509`, which skips blocks of other kinds, such as the
    /// key of a combined PEM file); reading stops at the first block that does not decode. Throws `noCertificates`
    /// when there is none.
    package static func all(inPEM pem: [UInt8]) throws(CryptoError) -> [OpenSSLCertificate] {
        OpenSSLError.clearQueue()
        let bio = try OpenSSLMemoryBIO(copying: pem)
        var certificates: [OpenSSLCertificate] = []
        while let certificate = PEM_read_bio_X509(bio.pointer, nil, nil, nil) {
            certificates.append(OpenSSLCertificate(taking: certificate))
        }
        OpenSSLError.clearQueue()  // the read that ends the loop queues "no start line"
        guard !certificates.isEmpty else {
            throw CryptoError.noCertificates.with(context: "no PEM certificate found")
        }
        return certificates
    }

    /// The certificate as DER.
    package func der() throws(CryptoError) -> [UInt8] {
        try OpenSSLDER.encode("i2d_X509") { i2d_X509(pointer, $0) }
    }

    /// The DER SubjectPublicKeyInfo exactly as the certificate carries it (what SPKI pins hash).
    package func subjectPublicKeyInfoDER() throws(CryptoError) -> [UInt8] {
        guard let publicKey = X509_get_X509_PUBKEY(pointer) else {  // borrowed: owned by the certificate
            throw OpenSSLError.failure("X509_get_X509_PUBKEY", kind: .malformedCertificate)
        }
        return try OpenSSLDER.encode("i2d_X509_PUBKEY") { i2d_X509_PUBKEY(publicKey, $0) }
    }

    /// The certificate's public key.
    func publicKey() throws(CryptoError) -> OpenSSLKey {
        guard let key = X509_get_pubkey(pointer) else {  // a new reference: the wrapper frees it
            throw OpenSSLError.failure("X509_get_pubkey", kind: .malformedCertificate)
        }
        return OpenSSLKey(taking: key)
    }
}

// MARK: - Fields

/// What people and the mock read from a certificate: subject and issuer lines, single subject attributes, and
/// the raw values of its extensions by OID.
extension OpenSSLCertificate {
    /// The subject as one RFC 2253 line (`CN=api.example,O=Example`).
    package var subjectLine: String { Self.line(of: X509_get_subject_name(pointer)) }

    /// The issuer as one RFC 2253 line.
    package var issuerLine: String { Self.line(of: X509_get_issuer_name(pointer)) }

    /// The subject's first common name (CN), if any.
    package var subjectCommonName: String? { Self.attribute(NID_commonName, in: X509_get_subject_name(pointer)) }

    /// The subject's first user ID (UID, OID 0.9.2342.19200300.100.1.1), if any: an APNs certificate's topic.
    package var subjectUserID: String? { Self.attribute(NID_userId, in: X509_get_subject_name(pointer)) }

    /// Each extension's value (the contents of its OCTET STRING, DER) by dotted OID.
    package var extensions: [String: [UInt8]] {
        var extensions: [String: [UInt8]] = [:]
        for index in 0..<X509_get_ext_count(pointer) {
            guard let item = X509_get_ext(pointer, index),  // borrowed from the certificate
                let object = X509_EXTENSION_get_object(item), let data = X509_EXTENSION_get_data(item)
            else { continue }
            var oid = [CChar](repeating: 0, count: 128)
            let length = OBJ_obj2txt(&oid, Int32(oid.count), object, 1)
            guard length > 0, Int(length) < oid.count else { continue }
            let name = String(decoding: oid[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard let bytes = ASN1_STRING_get0_data(data) else { continue }
            extensions[name] = Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))))
        }
        return extensions
    }

    /// An `X509_NAME` (borrowed) as one RFC 2253 line; empty when it cannot be printed.
    private static func line(of name: OpaquePointer?) -> String {
        guard let name, let bio = try? OpenSSLMemoryBIO() else { return "" }
        guard X509_NAME_print_ex(bio.pointer, name, 0, apns_XN_FLAG_RFC2253_UTF8()) >= 0 else {
            OpenSSLError.clearQueue()
            return ""
        }
        return bio.text()
    }

    /// The first attribute `nid` of an `X509_NAME` (borrowed), as UTF-8.
    private static func attribute(_ nid: Int32, in name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),  // borrowed
            let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else {
            OpenSSLError.clearQueue()
            return nil
        }
        defer { apns_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }
}
