import APNSCore
internal import Glibc

/// A failure of the transport below HTTP/2: sockets, name resolution, TLS, the proxy tunnel. A kind (new kinds can
/// be added without breaking callers) and a detail; compare with the static kinds (`error.kind == .pinMismatch`)
/// and show `description`: the kind's short, stable text, plus the C library's own text where there is one.
public struct TransportError: KindedError, Hashable, Sendable {
    /// What went wrong, without the detail text; compare errors by kind (the kinds are below).
    public typealias Kind = ErrorKind<TransportError>

    /// The kind of failure.
    public let kind: Kind
    /// The specifics: OpenSSL's error text, the verify reason, `strerror`, the proxy's status line, the pins seen.
    public let detail: String

    init(_ kind: Kind, _ detail: String = "") {
        self.kind = kind
        self.detail = detail
    }

    /// Whether trying again (on a new connection, later) can help: not for the kinds in `Kind.permanent`, which
    /// the pool stops on and reports.
    public var isRetryable: Bool { !Kind.permanent.contains(kind) }
}

extension ErrorKind where Owner == TransportError {
    /// The server (or proxy) refused the TCP connection.
    public static let connectionRefused = Self("connection refused")
    /// The TCP connection could not be made for another reason (unreachable network, no route).
    public static let connectFailed = Self("connect failed")
    /// The host name did not resolve to an address.
    public static let nameResolutionFailed = Self("name resolution failed")
    /// The TLS handshake failed for a reason other than the certificate checks below.
    public static let handshakeFailed = Self("TLS handshake failed")
    /// The server's certificate chain did not verify against the trusted roots.
    public static let certificateVerifyFailed = Self("certificate verify failed")
    /// The server's certificate is valid but names another host.
    public static let hostnameMismatch = Self("certificate does not match the host name")
    /// The server refused the client certificate during the handshake.
    public static let clientCertificateRejected = Self("server rejected the client certificate")
    /// No key in the server's certificate chain matches a configured SPKI pin.
    public static let pinMismatch = Self("no certificate in the server's chain matches a pinned key")
    /// The server did not agree to HTTP/2 in the TLS handshake.
    public static let alpnNotH2 = Self("server did not select HTTP/2 (ALPN h2)")
    /// The HTTP proxy answered the CONNECT request with a status other than 2xx.
    public static let proxyRefused = Self("proxy refused the CONNECT request")
    /// The HTTP proxy's answer to CONNECT could not be parsed.
    public static let proxyProtocolError = Self("proxy sent an invalid response")
    /// The peer closed the connection.
    public static let closedByPeer = Self("connection closed by peer")
    /// The peer reset the connection.
    public static let connectionReset = Self("connection reset by peer")
    /// A connect, handshake or answer took longer than its time limit.
    public static let timeout = Self("timed out")
    /// TLS failed after the handshake (a bad record, an alert from the peer).
    public static let tlsFailure = Self("TLS error")
    /// The TLS or transport settings are unusable (a certificate or key that does not load, a bad option).
    public static let invalidConfiguration = Self("invalid TLS or transport configuration")
    /// A system call failed; the detail names it and gives `strerror`.
    public static let systemCallFailed = Self("system call failed")
    /// The event loop was closed before the operation could run.
    public static let eventLoopClosed = Self("event loop closed")
    /// The HTTP/2 session broke the protocol or was ended by the peer for it.
    public static let http2ProtocolError = Self("HTTP/2 protocol error")
    /// The server refused the TLS handshake: no TLS version or cipher suite in common, or a similar alert.
    public static let handshakeRefused = Self("server refused the TLS handshake")
    /// APNs declared freshly signed provider tokens expired on arrival: this host's clock is probably wrong.
    public static let providerTokenRejected = Self("provider tokens rejected as expired")
    /// We closed the connection ourselves (the pool shut down) before every answer arrived.
    public static let shutdown = Self("closed at shutdown")

    /// The kinds that trying again cannot mend: the one list, read by `isRetryable` and by the connection pool,
    /// which ends on one of them when it closes a connection before the server spoke. The server's identity or
    /// protocol is wrong (certificate, host name, pins, ALPN), or ours is (configuration, client certificate), the
    /// server or the proxy refused us (TLS version, cipher suite, CONNECT), APNs rejects fresh tokens (the clock),
    /// or the loop or the pool is gone.
    static let permanent: Set<Self> = [
        .pinMismatch, .certificateVerifyFailed, .hostnameMismatch, .clientCertificateRejected, .alpnNotH2,
        .invalidConfiguration, .eventLoopClosed, .handshakeRefused, .providerTokenRejected, .shutdown, .proxyRefused,
    ]
}

// MARK: - Errno

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
