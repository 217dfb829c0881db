internal import Glibc

extension TransportError {
    /// A failed system call, with the C library's text for `code` (an `errno` value).
    static func system(_ call: String, _ code: Int32) -> TransportError {
        TransportError(.systemCallFailed, "\(call): \(errnoText(code))")
    }

    /// `strerror(code)` plus the symbolic number, for messages.
    static func errnoText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return "\(String(cString: text)) (errno \(code))"
    }

    /// The error for a socket-level failure on an established or connecting socket.
    static func socket(_ call: String, _ code: Int32) -> TransportError {
        switch code {
        case ECONNREFUSED: return TransportError(.connectionRefused, "\(call): \(errnoText(code))")
        case ECONNRESET, EPIPE: return TransportError(.connectionReset, "\(call): \(errnoText(code))")
        case ETIMEDOUT: return TransportError(.timeout, "\(call): \(errnoText(code))")
        default: return TransportError(.connectFailed, "\(call): \(errnoText(code))")
        }
    }
}
