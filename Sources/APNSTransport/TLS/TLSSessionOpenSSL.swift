import APNSCrypto
internal import COpenSSL
internal import Glibc

/// The outcome of one step of a TLS session (handshake, read, write) on a non-blocking socket.
enum TLSSessionResult: Equatable {
    /// Done (handshake), or this many bytes moved (read: never zero).
    case transferred(Int)
    /// Retry when the socket is readable.
    case wantRead
    /// Retry when the socket is writable.
    case wantWrite
    /// The peer sent close_notify: a clean end of its data.
    case closeNotify
    /// The peer closed the TCP connection without close_notify (possible truncation).
    case endOfFile
    case failed(TransportError)
}

/// Owns one `SSL` object attached to a socket descriptor (`SSL_set_fd`; the socket stays owned by the caller),
/// freed in `deinit`, and keeps its context alive. OpenSSL does the socket I/O itself; every call reports
/// WANT_READ/WANT_WRITE explicitly and never blocks.
final class TLSSessionOpenSSL {
    private let ssl: OpaquePointer
    let context: TLSContextOpenSSL

    /// A client session verifying `serverName` (SNI for names, IP check for literals), or a server session.
    init(context: TLSContextOpenSSL, fd: Int32, serverName: String?) throws(TransportError) {
        ERR_clear_error()
        guard let ssl = SSL_new(context.pointer) else { throw TLSErrorOpenSSL.failure(.tlsFailure, "SSL_new") }
        self.ssl = ssl
        self.context = context
        guard SSL_set_fd(ssl, fd) == 1 else { throw TLSErrorOpenSSL.failure(.tlsFailure, "SSL_set_fd") }
        guard !context.isServer else {
            SSL_set_accept_state(ssl)
            return
        }
        SSL_set_connect_state(ssl)
        context.offerRememberedSession(to: ssl)
        guard let serverName, !serverName.isEmpty else { return }
        if SocketAddress.isIPLiteral(serverName) {
            let literal = serverName.hasPrefix("[") ? String(serverName.dropFirst().dropLast()) : serverName
            // No SNI for IP literals (RFC 6066); the certificate must carry the IP in its subjectAltName.
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), literal) == 1 else {
                throw TLSErrorOpenSSL.failure(.invalidConfiguration, "IP address '\(literal)'")
            }
        } else {
            guard apns_SSL_set_tlsext_host_name(ssl, serverName) == 1 else {
                throw TLSErrorOpenSSL.failure(.invalidConfiguration, "server name '\(serverName)'")
            }
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            guard SSL_set1_host(ssl, serverName) == 1 else {
                throw TLSErrorOpenSSL.failure(.invalidConfiguration, "host name '\(serverName)'")
            }
        }
    }

    deinit {
        SSL_free(ssl)
    }

    /// One handshake step; `.transferred(0)` when the handshake is complete.
    func handshake() -> TLSSessionResult {
        ERR_clear_error()
        let status = SSL_do_handshake(ssl)
        if status == 1 { return .transferred(0) }
        let code = errno
        switch outcome(status, errno: code) {
        case .failed(let error): return .failed(handshakeError(error))
        case .endOfFile, .closeNotify:
            return .failed(handshakeError(TransportError(.handshakeFailed, "the peer closed the connection")))
        case let other: return other
        }
    }

    /// Decrypts what is available into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> TLSSessionResult {
        ERR_clear_error()
        var count = 0
        if SSL_read_ex(ssl, buffer.baseAddress, buffer.count, &count) == 1 { return .transferred(count) }
        return outcome(0, errno: errno)
    }

    /// Encrypts and sends from `bytes`; with partial writes enabled this returns after at least one record.
    /// After `.wantRead`/`.wantWrite` the next call must start with the same bytes.
    func write(_ bytes: UnsafeRawBufferPointer) -> TLSSessionResult {
        ERR_clear_error()
        var count = 0
        if SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &count) == 1 { return .transferred(count) }
        return outcome(0, errno: errno)
    }

    /// Whether the handshake resumed a session (no certificates were exchanged: they were checked when the session
    /// was made).
    var isResumed: Bool { SSL_session_reused(ssl) == 1 }

    /// Client: offers this connection's session to the next connections once it is resumable; true once done.
    func rememberSessionIfResumable() -> Bool {
        context.rememberSession(of: ssl)
    }

    /// Sends close_notify if it can go out now; does not wait for the peer's.
    func sendCloseNotify() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// The negotiated parameters and the peer's certificates (presented chain, leaf first).
    func handshakeInfo() -> TLSHandshakeInfo {
        var protocolData: UnsafePointer<UInt8>?
        var protocolLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &protocolData, &protocolLength)
        let selected = protocolData.map {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(protocolLength)), as: UTF8.self)
        }
        let version = SSL_get_version(ssl).map { String(cString: $0) } ?? "unknown"
        let cipher =
            SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "unknown"
        return TLSHandshakeInfo(
            applicationProtocol: selected, protocolVersion: version, cipherSuite: cipher,
            peerCertificates: peerCertificates(includeVerified: false), resumed: isResumed)
    }

    /// The presented chain, plus (with `includeVerified`) the chain verification built up to the trust anchor,
    /// without duplicates: what SPKI pins are checked against.
    func peerCertificates(includeVerified: Bool) -> [TLSPeerCertificate] {
        var result: [TLSPeerCertificate] = []
        func add(_ certificate: OpenSSLCertificate?) {
            guard let certificate, let decoded = TLSPeerCertificate(certificate), !result.contains(decoded) else {
                return
            }
            result.append(decoded)
        }
        // On a server the presented chain omits the leaf; SSL_get1_peer_certificate returns a new reference.
        if let leaf = SSL_get1_peer_certificate(ssl) { add(OpenSSLCertificate(taking: leaf)) }
        for stack in [SSL_get_peer_cert_chain(ssl), includeVerified ? SSL_get0_verified_chain(ssl) : nil] {
            guard let stack else { continue }  // borrowed from the session
            for index in 0..<apns_sk_X509_num(stack) {
                if let certificate = apns_sk_X509_value(stack, index) {
                    add(OpenSSLCertificate(retaining: certificate))
                }
            }
        }
        return result
    }

    /// Alerts a server sends about the client's certificate (missing, bad, untrusted, revoked, expired).
    private static let clientCertificateAlerts: Set<Int32> = [
        SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE,
        SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED,
        SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, SSL_R_TLSV1_ALERT_UNKNOWN_CA,
        SSL_R_TLSV1_ALERT_ACCESS_DENIED,
    ]

    /// Alerts and local errors meaning the server and this client share no TLS version, with the cause to show.
    private static let versionRefusals: Set<Int32> = [
        SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_NO_PROTOCOLS_AVAILABLE,
        SSL_R_WRONG_SSL_VERSION, SSL_R_VERSION_TOO_LOW,
    ]

    /// Alerts and local errors meaning the server and this client share no cipher suite (or key-exchange group),
    /// or the server refused the handshake for a reason of its own.
    private static let handshakeRefusals: Set<Int32> = [
        SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE, SSL_R_TLSV1_ALERT_INSUFFICIENT_SECURITY, SSL_R_NO_SHARED_CIPHER,
        SSL_R_NO_CIPHERS_AVAILABLE, SSL_R_WRONG_CIPHER_RETURNED, SSL_R_NO_SUITABLE_KEY_SHARE,
    ]

    /// The client-side failure a server's alert (or our own refusal of its choice) stands for, if it is one that
    /// retrying cannot cure; nil otherwise. Consumes the error queue when it returns a failure.
    private func refusal(reason: Int32) -> TransportError? {
        guard !context.isServer else { return nil }
        if Self.versionRefusals.contains(reason) {
            return TLSErrorOpenSSL.failure(
                .handshakeRefused, "no TLS version in common (this client allows TLS 1.2 and 1.3)")
        }
        if Self.handshakeRefusals.contains(reason) {
            return TLSErrorOpenSSL.failure(
                .handshakeRefused, "no cipher suite in common (this client offers forward-secret AEAD suites only)")
        }
        if Self.clientCertificateAlerts.contains(reason) {
            // The server's alert about our certificate (with TLS 1.3 it arrives after our side of the
            // handshake, on the first read). Retrying with the same certificate cannot help.
            return TLSErrorOpenSSL.failure(.clientCertificateRejected, "alert from the server")
        }
        return nil
    }

    /// Maps a failed call's `SSL_get_error` to a result. `code` is errno captured right after the call.
    private func outcome(_ status: Int32, errno code: Int32) -> TLSSessionResult {
        let error = SSL_get_error(ssl, status)
        switch error {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closeNotify
        case SSL_ERROR_SYSCALL:
            let queued = OpenSSLError.drainQueue(fallback: "")
            if code != 0 { return .failed(TransportError.socket("TLS I/O", code)) }
            return queued.isEmpty ? .endOfFile : .failed(TransportError(.tlsFailure, queued))
        case SSL_ERROR_SSL:
            let reason = ERR_GET_REASON(ERR_peek_error())
            if reason == SSL_R_UNEXPECTED_EOF_WHILE_READING {
                // OpenSSL 3 reports a TCP close without close_notify this way.
                ERR_clear_error()
                return .endOfFile
            }
            if reason == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL {
                return .failed(TLSErrorOpenSSL.failure(.alpnNotH2, "the server supports none of the offered protocols"))
            }
            if let refusal = refusal(reason: reason) { return .failed(refusal) }
            return .failed(TLSErrorOpenSSL.failure(.tlsFailure, "TLS"))
        default:
            return .failed(TLSErrorOpenSSL.failure(.tlsFailure, "SSL_get_error \(error)"))
        }
    }

    /// Refines a handshake failure with the certificate verification result, when verification failed.
    private func handshakeError(_ error: TransportError) -> TransportError {
        let verify = SSL_get_verify_result(ssl)
        if verify != X509_V_OK {
            let reason = OpenSSLError.verifyText(verify)
            if verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH {
                return TransportError(.hostnameMismatch, reason)
            }
            return TransportError(.certificateVerifyFailed, reason)
        }
        switch error.kind {
        case .tlsFailure: return TransportError(.handshakeFailed, error.detail)
        case .handshakeFailed, .connectionReset, .alpnNotH2, .clientCertificateRejected, .handshakeRefused: return error
        default: return TransportError(.handshakeFailed, error.description)
        }
    }
}

/// `TLSSessionOpenSSL`'s reads and writes for Swift buffers: where the loop's `[UInt8]` read buffer and the
/// output buffer's `RawSpan` become the pointers `SSL_read_ex`/`SSL_write_ex` take, without a copy.
extension TLSSessionOpenSSL {
    /// Decrypts what is available into the start of `buffer` (at most `buffer.count` bytes).
    func read(into buffer: inout [UInt8]) -> TLSSessionResult {
        buffer.withUnsafeMutableBytes { read(into: $0) }
    }

    /// Encrypts and sends from `bytes` (see `write(_:)` on the raw buffer: the same bytes again after a want).
    func write(_ bytes: RawSpan) -> TLSSessionResult {
        bytes.withUnsafeBytes { write($0) }
    }
}
