internal import COpenSSL

/// Owns one `EVP_PKEY` (a private key, or only a public key), freed with `EVP_PKEY_free` in `deinit`: the one key
/// owner, for crypto and TLS alike.
///
/// The key is never modified after creation. OpenSSL 3 allows concurrent read-only use of an `EVP_PKEY` (signing
/// and verifying only read it; the provider-side export cache it fills on first use is guarded by the key's own
/// lock), so instances are shared across threads: `@unchecked Sendable`.
package final class OpenSSLKey: @unchecked Sendable {
    /// The `EVP_PKEY *`. Borrowed by callers for the duration of a call; never freed by them.
    package let pointer: OpaquePointer

    /// Takes ownership of `pointer`: this object frees it.
    package init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }

    /// A private key from the DER body of a PEM block labelled `label` (`PRIVATE KEY` is PKCS#8,
    /// `EC PRIVATE KEY` SEC 1, `RSA PRIVATE KEY` PKCS#1; anything else is left to OpenSSL to recognise).
    static func privateKey(der: [UInt8], label: String) throws(CryptoError) -> OpenSSLKey {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            let length = Int(buffer.count)
            switch label {
            case "EC PRIVATE KEY": return d2i_PrivateKey(EVP_PKEY_EC, nil, &cursor, length)
            case "RSA PRIVATE KEY": return d2i_PrivateKey(EVP_PKEY_RSA, nil, &cursor, length)
            default: return d2i_AutoPrivateKey(nil, &cursor, length)
            }
        }
        guard let key else { throw OpenSSLError.failure("decoding \(label)", kind: .malformedKey) }
        return OpenSSLKey(taking: key)
    }

    /// The first private key of PEM text (`PEM_read_bio_PrivateKey`: PKCS#8, SEC 1, PKCS#1, encrypted PKCS#8 or
    /// legacy encrypted PEM), opened with `password`. Never prompts on the terminal. Throws `encryptedKey` when a
    /// password was given and the key does not open with it, `malformedKey` when none was and no key reads.
    package static func privateKey(pem: [UInt8], password: String?) throws(CryptoError) -> OpenSSLKey {
        OpenSSLError.clearQueue()
        let bio = try OpenSSLMemoryBIO(copying: pem)
        // Always pass a callback: OpenSSL's default one would prompt on the terminal for an encrypted key.
        let key = (password ?? "").withCString { text in
            PEM_read_bio_PrivateKey(bio.pointer, nil, passwordCallback, UnsafeMutableRawPointer(mutating: text))
        }
        guard let key else {
            guard password == nil else {
                throw OpenSSLError.failure("decrypting the private key (wrong password?)", kind: .encryptedKey)
            }
            throw OpenSSLError.failure(
                "no usable private key (an encrypted key needs its password)", kind: .malformedKey)
        }
        return OpenSSLKey(taking: key)
    }

    /// A public key from a DER SubjectPublicKeyInfo (the body of a `PUBLIC KEY` PEM block).
    static func publicKey(subjectPublicKeyInfo der: [UInt8]) throws(CryptoError) -> OpenSSLKey {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { throw OpenSSLError.failure("decoding PUBLIC KEY", kind: .malformedKey) }
        return OpenSSLKey(taking: key)
    }

    /// A fresh EC key pair on P-256.
    static func generateP256() throws(CryptoError) -> OpenSSLKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw OpenSSLError.failure("EVP_PKEY_CTX_new_from_name")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
            EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_generate(context, &key) == 1,
            let key
        else { throw OpenSSLError.failure("generating a P-256 key") }
        return OpenSSLKey(taking: key)
    }

    /// The algorithm's name as OpenSSL gives it (`EC`, `RSA`, `ED25519`, ...).
    var typeName: String {
        EVP_PKEY_get0_type_name(pointer).map { String(cString: $0) } ?? "unknown"
    }

    /// Whether this is an elliptic-curve (ECDSA/ECDH) key.
    var isEC: Bool { EVP_PKEY_is_a(pointer, "EC") == 1 }

    /// The size of the key in bits (the modulus for RSA, the curve's order for EC).
    var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    /// The curve's name for an EC key (`prime256v1` for P-256), else nil.
    var groupName: String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 80) { buffer -> String? in
            guard let base = buffer.baseAddress else { return nil }
            var length = 0
            guard EVP_PKEY_get_group_name(pointer, base, buffer.count, &length) == 1 else {
                OpenSSLError.clearQueue()
                return nil
            }
            return String(cString: base)
        }
    }

    /// Whether this is an EC key on P-256 (prime256v1, secp256r1), the curve ES256 signs with.
    var isOnP256: Bool {
        guard isEC, let name = groupName else { return false }
        let nid = OBJ_txt2nid(name) != NID_undef ? OBJ_txt2nid(name) : EC_curve_nist2nid(name)
        return nid == NID_X9_62_prime256v1
    }

    /// Throws `keyNotEC` or `keyNotOnP256` unless this is a P-256 key (APNs provider keys, ES256).
    func requireP256() throws(CryptoError) {
        guard isEC else { throw CryptoError.keyNotEC.with(context: "the key is \(summary); APNs keys are EC P-256") }
        guard isOnP256 else { throw CryptoError.keyNotOnP256.with(context: "the key is \(summary); ES256 needs P-256") }
    }

    /// Short text for messages: `EC P-256`, `EC secp384r1`, `RSA 2048-bit`.
    var summary: String {
        if isOnP256 { return "EC P-256" }
        if isEC { return "EC \(groupName ?? "unknown curve")" }
        return "\(typeName) \(bits)-bit"
    }

    /// The public half as DER SubjectPublicKeyInfo.
    func publicKeyDER() throws(CryptoError) -> [UInt8] {
        try OpenSSLDER.encode("i2d_PUBKEY") { i2d_PUBKEY(pointer, $0) }
    }

    /// The private key as unencrypted PKCS#8 DER (the body of a `PRIVATE KEY` PEM block).
    func privateKeyPKCS8DER() throws(CryptoError) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(pointer) else { throw OpenSSLError.failure("EVP_PKEY2PKCS8") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        return try OpenSSLDER.encode("i2d_PKCS8_PRIV_KEY_INFO") { i2d_PKCS8_PRIV_KEY_INFO(info, $0) }
    }

    /// Whether `other` has the same public key (`EVP_PKEY_eq`), for example a private key and its certificate.
    func hasSamePublicKey(as other: OpenSSLKey) -> Bool {
        let equal = EVP_PKEY_eq(pointer, other.pointer) == 1
        OpenSSLError.clearQueue()
        return equal
    }
}

/// The two-pass `i2d_*` pattern: ask for the length, then encode into an array of that size.
enum OpenSSLDER {
    static func encode(
        _ operation: String,
        _ i2d: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32
    ) throws(CryptoError) -> [UInt8] {
        let length = i2d(nil)
        guard length > 0 else { throw OpenSSLError.failure(operation) }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return i2d(&cursor)
        }
        guard written == length else { throw OpenSSLError.failure(operation) }
        return der
    }
}

/// Copies the password handed as `userdata` into OpenSSL's buffer (`pem_password_cb`); never prompts.
private let passwordCallback:
    @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?)
        -> Int32 = { buffer, size, _, userdata in
            guard let buffer, let userdata, size > 0 else { return 0 }
            let text = userdata.assumingMemoryBound(to: CChar.self)
            let length = min(strlen(text), Int(size))
            buffer.update(from: text, count: length)
            return Int32(length)
        }

// MARK: - ES256

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

// MARK: - OpenSSLDigest

/// One-shot message digests through OpenSSL's EVP interface.
enum OpenSSLDigest {
    /// SHA-256 of `bytes` (32 bytes).
    static func sha256(_ bytes: [UInt8]) throws(CryptoError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        guard status == 1, length == 32 else { throw OpenSSLError.failure("EVP_Digest SHA-256") }
        return digest
    }
}
