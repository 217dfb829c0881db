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
