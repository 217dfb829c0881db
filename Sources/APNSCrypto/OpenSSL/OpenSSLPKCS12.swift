internal import COpenSSL
import Foundation

/// Opens PKCS#12 archives (`.p12`, `.pfx`) with `PKCS12_parse`, for crypto and TLS alike (`--p12` loads here), after
/// checking the archive's MAC: bytes that are not PKCS#12 are `malformedPKCS12`, a password the MAC refuses is
/// `wrongPassword`. Archives from older tools (macOS Keychain Access
/// among them) encrypt certificates with RC2-40, which OpenSSL 3 keeps in its legacy provider: when parsing
/// fails, the legacy provider (and the default one) is loaded once (`OpenSSLLegacyProviders`) and parsing is
/// retried.
package enum OpenSSLPKCS12 {
    /// What an archive held, each object owned by its wrapper.
    package struct Contents {
        package let key: OpenSSLKey
        package let certificate: OpenSSLCertificate
        package let chain: [OpenSSLCertificate]
    }

    /// The archive's key, certificate and further certificates. Throws `malformedPKCS12`, `wrongPassword`, or
    /// `incompletePKCS12` (no key or no certificate).
    package static func parse(der: [UInt8], password: String) throws(CryptoError) -> Contents {
        OpenSSLError.clearQueue()
        let archive: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let archive else { throw OpenSSLError.failure("d2i_PKCS12", kind: .malformedPKCS12) }
        defer { PKCS12_free(archive) }
        if PKCS12_mac_present(archive) == 1 {
            // As PKCS12_parse does: an empty password may have been stored as "no password".
            let verified =
                PKCS12_verify_mac(archive, password, -1) == 1
                || (password.isEmpty && PKCS12_verify_mac(archive, nil, 0) == 1)
            guard verified else {
                OpenSSLError.clearQueue()
                throw CryptoError.wrongPassword.with(context: "its integrity check (MAC) fails with the password given")
            }
        }
        var outcome = parseVerified(archive, password: password)
        if case .failed = outcome, OpenSSLLegacyProviders.load() {
            OpenSSLError.clearQueue()
            outcome = parseVerified(archive, password: password)
        }
        switch outcome {
        case .parsed(let contents): return contents
        case .incomplete(let missing):
            throw CryptoError.incompletePKCS12.with(context: "the archive holds no \(missing)")
        case .failed: throw OpenSSLError.failure("PKCS12_parse", kind: .malformedPKCS12)
        }
    }

    /// One parse attempt: the contents, an archive lacking a part, or a failure worth a retry.
    private enum Outcome {
        case parsed(Contents)
        case incomplete(missing: String)
        case failed
    }

    private static func parseVerified(_ archive: OpaquePointer, password: String) -> Outcome {
        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var chain: OpaquePointer?
        guard PKCS12_parse(archive, password, &key, &certificate, &chain) == 1 else { return .failed }
        // PKCS12_parse hands over ownership of all three; wrap them at once so every path frees them.
        let ownedKey = key.map(OpenSSLKey.init(taking:))
        let ownedCertificate = certificate.map(OpenSSLCertificate.init(taking:))
        var ownedChain: [OpenSSLCertificate] = []
        if let chain {
            for index in 0..<apns_sk_X509_num(chain) {
                // Take a reference of our own, then let the stack free its references with itself.
                guard let member = apns_sk_X509_value(chain, index),
                    let owned = OpenSSLCertificate(retaining: member)
                else { continue }
                ownedChain.append(owned)
            }
            apns_sk_X509_pop_free(chain)
        }
        guard let ownedKey else { return .incomplete(missing: "private key") }
        guard let ownedCertificate else { return .incomplete(missing: "certificate") }
        return .parsed(Contents(key: ownedKey, certificate: ownedCertificate, chain: ownedChain))
    }
}

// MARK: - OpenSSLLegacyProviders

/// Owns the process's handles on OpenSSL's default and legacy providers: PKCS#12 archives from older tools
/// (macOS Keychain Access among them) encrypt with RC2-40, which OpenSSL 3 keeps in its legacy provider, and loading
/// any provider switches the implicit default one off, so both are loaded, once per process, on first need.
///
/// The handles are released at exit, before OpenSSL's own clean-up (atexit handlers run in reverse order, and
/// OpenSSL registered its handler when it was first used): a provider still referenced then is never freed, and
/// what the legacy module allocated is reported by LeakSanitizer once the module is unmapped.
enum OpenSSLLegacyProviders {
    /// Loads both providers the first time; whether both are available.
    @discardableResult
    static func load() -> Bool { loaded }

    private static let loaded: Bool = {
        let defaultProvider = OSSL_PROVIDER_load(nil, "default")
        let legacyProvider = OSSL_PROVIDER_load(nil, "legacy")
        heldProviders = [legacyProvider, defaultProvider].compactMap { $0 }
        atexit { releaseHeldProviders() }
        return defaultProvider != nil && legacyProvider != nil
    }()
}

/// The loaded handles, written once (inside the thread-safe initialiser of `OpenSSLLegacyProviders.loaded`) and
/// read once, by the exit handler, when no other thread runs Swift code of ours.
nonisolated(unsafe) private var heldProviders: [OpaquePointer] = []

private func releaseHeldProviders() {
    for provider in heldProviders { OSSL_PROVIDER_unload(provider) }
    heldProviders = []
}
