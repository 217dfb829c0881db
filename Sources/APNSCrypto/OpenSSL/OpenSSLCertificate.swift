import COpenSSL

/// Owns one `X509` certificate, freed with `X509_free` in `deinit`. Read-only after creation.
final class OpenSSLCertificate {
    /// The `X509 *`. Borrowed by callers for the duration of a call.
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`: this object frees it.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
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

    /// The certificate as DER.
    func der() throws(CryptoError) -> [UInt8] {
        try OpenSSLDER.encode("i2d_X509") { i2d_X509(pointer, $0) }
    }

    /// The DER SubjectPublicKeyInfo exactly as the certificate carries it (what SPKI pins hash).
    func subjectPublicKeyInfoDER() throws(CryptoError) -> [UInt8] {
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

    /// The subject's first common name (CN), if any.
    var subjectCommonName: String? {
        guard let name = X509_get_subject_name(pointer) else { return nil }  // borrowed
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry) else {
            return nil
        }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else {
            OpenSSLError.clearQueue()
            return nil
        }
        defer { apns_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    /// The subject as one RFC 2253 line (`CN=api.example,O=Example`).
    var subjectLine: String {
        guard let name = X509_get_subject_name(pointer), let bio = try? OpenSSLMemoryBIO() else { return "" }
        guard X509_NAME_print_ex(bio.pointer, name, 0, apns_XN_FLAG_RFC2253_UTF8()) >= 0 else {
            OpenSSLError.clearQueue()
            return ""
        }
        return bio.text()
    }
}
