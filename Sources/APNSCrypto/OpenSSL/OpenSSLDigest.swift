internal import COpenSSL
import Foundation

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

    /// SHA-256 of a whole file's bytes as they stand on disk, read 1 MiB at a time (a campaign file's content
    /// fingerprint: `.gz` files are hashed compressed).
    static func sha256(ofFileAtPath path: String) throws(CryptoError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let missing = !FileManager.default.fileExists(atPath: path)
            throw (missing ? CryptoError.fileNotFound : CryptoError.fileUnreadable).with(context: path)
        }
        defer { try? handle.close() }
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { throw OpenSSLError.failure("EVP_DigestInit_ex") }
        while true {
            let chunk: Data
            do {
                guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else { break }
                chunk = data
            } catch {
                throw CryptoError.fileUnreadable.with(context: "\(path): \(error.localizedDescription)")
            }
            let status = chunk.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
            guard status == 1 else { throw OpenSSLError.failure("EVP_DigestUpdate") }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let status = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        guard status == 1, length == 32 else { throw OpenSSLError.failure("EVP_DigestFinal_ex") }
        return digest
    }
}

/// Content fingerprints of files: the SHA-256 of their bytes, in lowercase hex.
public enum FileFingerprint {
    /// The fingerprint of the file at `path`; throws `fileNotFound` or `fileUnreadable` naming it.
    public static func sha256Hex(ofFileAtPath path: String) throws(CryptoError) -> String {
        let digest = try OpenSSLDigest.sha256(ofFileAtPath: path)
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
