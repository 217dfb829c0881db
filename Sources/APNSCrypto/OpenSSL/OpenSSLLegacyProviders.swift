internal import COpenSSL
import Foundation

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
