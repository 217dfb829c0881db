internal import COpenSSL

/// ES256 with OpenSSL 3: SHA-256 and ECDSA on P-256 through `EVP_DigestSign`/`EVP_DigestVerify`, converting between
/// OpenSSL's DER `ECDSA-Sig-Value` and the raw 64-byte `r||s` that JWS uses (RFC 7518 section 3.4).
extension OpenSSLKey {
    /// Length of one half (`r` or `s`) of a P-256 signature.
    static let es256HalfLength = 32

    /// Signs `message`, returning `r||s`, each half big-endian and left-padded to 32 bytes (`BN_bn2binpad`).
    /// The key must be a P-256 private key (callers check at load time).
    func signES256(_ message: some Collection<UInt8>) throws(CryptoError) -> [UInt8] {
        try withContiguousBytes(of: message) { bytes in
            Result { () throws(CryptoError) in try signES256(bytes) }
        }.get()
    }

    /// Whether `rawSignature` (64-byte `r||s`) is a valid ES256 signature of `message` by this key. Any malformed
    /// input is simply "not valid"; OpenSSL's error queue is left empty.
    func verifyES256(rawSignature: some Collection<UInt8>, message: some Collection<UInt8>) -> Bool {
        withContiguousBytes(of: rawSignature) { signature in
            withContiguousBytes(of: message) { bytes in verifyES256(rawSignature: signature, message: bytes) }
        }
    }

    private func signES256(_ message: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit_ex(context, nil, "SHA256", nil, nil, pointer, nil) == 1 else {
            throw OpenSSLError.failure("EVP_DigestSignInit_ex")
        }
        let input = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var length = 0
        guard EVP_DigestSign(context, nil, &length, input, message.count) == 1, length > 0 else {
            throw OpenSSLError.failure("EVP_DigestSign (length)")
        }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &der, &length, input, message.count) == 1 else {
            throw OpenSSLError.failure("EVP_DigestSign")
        }
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, length)
        }
        guard let signature else { throw OpenSSLError.failure("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)  // borrowed: owned by `signature`
        let half = Self.es256HalfLength
        var raw = [UInt8](repeating: 0, count: 2 * half)
        let padded = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            return BN_bn2binpad(r, base, Int32(half)) == half && BN_bn2binpad(s, base + half, Int32(half)) == half
        }
        guard padded else { throw OpenSSLError.failure("BN_bn2binpad") }
        return raw
    }

    private func verifyES256(rawSignature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> Bool {
        defer { OpenSSLError.clearQueue() }
        let half = Self.es256HalfLength
        guard rawSignature.count == 2 * half, let raw = rawSignature.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let der = Self.derSignature(r: raw, s: raw + half, halfLength: half),
              let context = EVP_MD_CTX_new()
        else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit_ex(context, nil, "SHA256", nil, nil, pointer, nil) == 1 else { return false }
        let input = message.baseAddress?.assumingMemoryBound(to: UInt8.self)
        return EVP_DigestVerify(context, der, der.count, input, message.count) == 1
    }

    /// `r` and `s` (big-endian, `halfLength` bytes each) as a DER `ECDSA-Sig-Value`, or nil on failure.
    private static func derSignature(r: UnsafePointer<UInt8>, s: UnsafePointer<UInt8>, halfLength: Int) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        guard let bigR = BN_bin2bn(r, Int32(halfLength), nil) else { return nil }
        guard let bigS = BN_bin2bn(s, Int32(halfLength), nil) else {
            BN_free(bigR)
            return nil
        }
        // ECDSA_SIG_set0 takes ownership of both numbers on success only.
        guard ECDSA_SIG_set0(signature, bigR, bigS) == 1 else {
            BN_free(bigR)
            BN_free(bigS)
            return nil
        }
        return try? OpenSSLDER.encode("i2d_ECDSA_SIG") { i2d_ECDSA_SIG(signature, $0) }
    }
}

/// Runs `body` on the bytes of `collection` in place when they are contiguous (arrays, slices, the UTF-8 view of a
/// native string), else on a copy.
func withContiguousBytes<Bytes: Collection<UInt8>, Result>(
    of collection: Bytes,
    _ body: (UnsafeRawBufferPointer) -> Result
) -> Result {
    if let result = collection.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) { return result }
    return Array(collection).withUnsafeBytes(body)
}
