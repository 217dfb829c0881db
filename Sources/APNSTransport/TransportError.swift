/// A failure of the transport below HTTP/2: sockets, name resolution, TLS, the proxy tunnel. A struct around a
/// private code so that new kinds can be added without breaking callers; compare with the static members
/// (`error.kind == .pinMismatch`) and show `description`, which is short and stable, plus the C library's own
/// text where there is one (`detail`).
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, without the detail text; compare errors by kind.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let code: Code
        fileprivate init(_ code: Code) { self.code = code }
        public var description: String { code.rawValue }

        public static let connectionRefused = Kind(.connectionRefused)
        public static let connectFailed = Kind(.connectFailed)
        public static let nameResolutionFailed = Kind(.nameResolutionFailed)
        public static let handshakeFailed = Kind(.handshakeFailed)
        public static let certificateVerifyFailed = Kind(.certificateVerifyFailed)
        public static let hostnameMismatch = Kind(.hostnameMismatch)
        public static let clientCertificateRejected = Kind(.clientCertificateRejected)
        public static let pinMismatch = Kind(.pinMismatch)
        public static let alpnNotH2 = Kind(.alpnNotH2)
        public static let proxyRefused = Kind(.proxyRefused)
        public static let proxyProtocolError = Kind(.proxyProtocolError)
        public static let closedByPeer = Kind(.closedByPeer)
        public static let connectionReset = Kind(.connectionReset)
        public static let timeout = Kind(.timeout)
        public static let tlsFailure = Kind(.tlsFailure)
        public static let invalidConfiguration = Kind(.invalidConfiguration)
        public static let systemCallFailed = Kind(.systemCallFailed)
        public static let eventLoopClosed = Kind(.eventLoopClosed)
        public static let http2ProtocolError = Kind(.http2ProtocolError)
        /// The server refused the TLS handshake: no TLS version or cipher suite in common, or a similar alert.
        public static let handshakeRefused = Kind(.handshakeRefused)
        /// APNs declared freshly signed provider tokens expired on arrival: this host's clock is probably wrong.
        public static let providerTokenRejected = Kind(.providerTokenRejected)
        /// We closed the connection ourselves (the pool shut down) before every answer arrived.
        public static let shutdown = Kind(.shutdown)
    }

    fileprivate enum Code: String, Hashable, Sendable {
        case connectionRefused = "connection refused"
        case connectFailed = "connect failed"
        case nameResolutionFailed = "name resolution failed"
        case handshakeFailed = "TLS handshake failed"
        case certificateVerifyFailed = "certificate verify failed"
        case hostnameMismatch = "certificate does not match the host name"
        case clientCertificateRejected = "server rejected the client certificate"
        case pinMismatch = "no certificate in the server's chain matches a pinned key"
        case alpnNotH2 = "server did not select HTTP/2 (ALPN h2)"
        case proxyRefused = "proxy refused the CONNECT request"
        case proxyProtocolError = "proxy sent an invalid response"
        case closedByPeer = "connection closed by peer"
        case connectionReset = "connection reset by peer"
        case timeout = "timed out"
        case tlsFailure = "TLS error"
        case invalidConfiguration = "invalid TLS or transport configuration"
        case systemCallFailed = "system call failed"
        case eventLoopClosed = "event loop closed"
        case http2ProtocolError = "HTTP/2 protocol error"
        case handshakeRefused = "server refused the TLS handshake"
        case providerTokenRejected = "provider tokens rejected as expired"
        case shutdown = "closed at shutdown"
    }

    /// The kind of failure.
    public let kind: Kind
    /// The specifics: OpenSSL's error text, the verify reason, `strerror`, the proxy's status line, the pins seen.
    public let detail: String

    init(_ kind: Kind, _ detail: String = "") {
        self.kind = kind
        self.detail = detail
    }

    /// `"<kind>: <detail>"`, or just the kind when there is no detail.
    public var description: String {
        detail.isEmpty ? kind.description : "\(kind.description): \(detail)"
    }

    /// Whether trying again (on a new connection, later) can help. Pin, certificate, hostname, client
    /// certificate, refused-handshake (TLS version, cipher suite), ALPN, provider-token and configuration
    /// failures will not go away by retrying; the pool should stop and report them.
    public var isRetryable: Bool {
        switch kind.code {
        case .pinMismatch, .certificateVerifyFailed, .hostnameMismatch, .clientCertificateRejected, .alpnNotH2,
             .invalidConfiguration, .eventLoopClosed, .handshakeRefused, .providerTokenRejected, .shutdown:
            return false
        case .connectionRefused, .connectFailed, .nameResolutionFailed, .handshakeFailed, .proxyRefused,
             .proxyProtocolError, .closedByPeer, .connectionReset, .timeout, .tlsFailure, .systemCallFailed,
             .http2ProtocolError:
            return true
        }
    }
}
