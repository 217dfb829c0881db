internal import COpenSSL

/// The one reader of OpenSSL's thread-local error queue (`ERR_get_error`, `ERR_error_string_n`), for crypto and TLS
/// alike: turns what is queued into text for our errors, leaving the queue empty.
package enum OpenSSLError {
    /// Every queued error, oldest first, joined by `"; "`; `fallback` when the queue was empty. The queue ends empty.
    package static func drainQueue(fallback: String = "no OpenSSL error queued") -> String {
        var messages: [String] = []
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress else { return }
            while case let code = ERR_get_error(), code != 0 {
                ERR_error_string_n(code, base, buffer.count)
                messages.append(String(cString: base))
            }
        }
        return messages.isEmpty ? fallback : messages.joined(separator: "; ")
    }

    /// Forgets queued errors, before a call whose failure is expected and handled (a verify that says "no").
    package static func clearQueue() {
        ERR_clear_error()
    }

    /// `kind` with `operation` and OpenSSL's queued text as context, for a call that failed unexpectedly.
    static func failure(_ operation: String, kind: CryptoError = .openSSLFailure) -> CryptoError {
        kind.with(context: "\(operation): \(drainQueue())")
    }

    /// The library's text for a certificate verification result (`X509_verify_cert_error_string`).
    package static func verifyText(_ code: Int) -> String {
        guard let text = X509_verify_cert_error_string(code) else { return "verify error \(code)" }
        return String(cString: text)
    }
}
