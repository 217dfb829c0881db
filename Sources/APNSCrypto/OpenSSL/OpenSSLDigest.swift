internal import COpenSSL

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
