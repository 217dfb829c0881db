import COpenSSL

/// Turns OpenSSL's thread-local error queue into text for `TransportError.detail` (`ERR_error_string_n`).
enum TLSErrorOpenSSL {
    /// Every queued error, oldest first, joined by "; "; the queue ends empty. Empty string when none queued.
    static func drainQueue() -> String {
        var messages: [String] = []
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress else { return }
            while case let code = ERR_get_error(), code != 0 {
                ERR_error_string_n(code, base, buffer.count)
                messages.append(String(cString: base))
            }
        }
        return messages.joined(separator: "; ")
    }

    /// `kind` with `operation` and the queued text.
    static func failure(_ kind: TransportError.Kind, _ operation: String) -> TransportError {
        let queued = drainQueue()
        return TransportError(kind, queued.isEmpty ? operation : "\(operation): \(queued)")
    }

    /// The library's text for an X509 verify result (`X509_verify_cert_error_string`).
    static func verifyText(_ code: Int) -> String {
        guard let text = X509_verify_cert_error_string(code) else { return "verify error \(code)" }
        return String(cString: text)
    }
}
