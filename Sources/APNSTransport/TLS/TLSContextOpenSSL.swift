import APNSCrypto
internal import COpenSSL
import Synchronization

/// Owns one configured `SSL_CTX` (freed in `deinit`) and what its callbacks read: the server's ALPN list in
/// wire format, kept at a stable address; on a client, the TLS session to resume (`rememberSession`). Its
/// configuration is immutable once built; OpenSSL allows `SSL_new` on a configured context from any thread, and
/// the session to resume is behind a lock, hence `@unchecked Sendable`. Every `TLSSessionOpenSSL` keeps its
/// context alive.
final class TLSContextOpenSSL: @unchecked Sendable {
    let pointer: OpaquePointer
    let isServer: Bool
    /// Client: protocols one of which the server must select (empty = no ALPN requirement).
    let requiredProtocols: [String]
    /// Client: SPKI-SHA256-BASE64 pins (empty = no pinning).
    let pins: Set<String>
    let handshakeTimeout: Double
    let connectTimeout: Double
    /// Server ALPN preference list as `[length][wire bytes]` (a 4-byte length, then the ALPN wire format).
    private let alpnSelection: UnsafeMutableRawBufferPointer?
    /// Client: the last resumable `SSL_SESSION` (one reference owned here; its address, 0 for none) of a connection
    /// that passed every check (verification, host name, ALPN, pins); new connections resume it.
    private let sessionToResume = Mutex<UInt>(0)

    private init(
        method: OpaquePointer?, isServer: Bool, handshake: TLSHandshakeSettings, requiredProtocols: [String],
        pins: Set<String>, connectTimeout: Double, alpnSelection: [UInt8]?
    ) throws(TransportError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(method) else { throw TLSErrorOpenSSL.failure(.tlsFailure, "SSL_CTX_new") }
        pointer = context
        self.isServer = isServer
        self.requiredProtocols = requiredProtocols
        self.pins = pins
        self.handshakeTimeout = handshake.timeout
        self.connectTimeout = connectTimeout
        if let alpnSelection {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 + alpnSelection.count, alignment: 4)
            buffer.storeBytes(of: UInt32(alpnSelection.count), as: UInt32.self)
            buffer.baseAddress?.advanced(by: 4).copyMemory(from: alpnSelection, byteCount: alpnSelection.count)
            self.alpnSelection = buffer
        } else {
            self.alpnSelection = nil
        }
        let minimum = handshake.minimumVersion
        let maximum = handshake.maximumVersion
        guard minimum <= maximum,
            apns_SSL_CTX_set_min_proto_version(context, Int32(minimum.rawValue)) == 1,
            apns_SSL_CTX_set_max_proto_version(context, Int32(maximum.rawValue)) == 1
        else {
            throw TLSErrorOpenSSL.failure(.invalidConfiguration, "TLS versions \(minimum) to \(maximum)")
        }
        guard SSL_CTX_set_cipher_list(context, handshake.cipherList) == 1 else {
            throw TLSErrorOpenSSL.failure(.invalidConfiguration, "cipher list '\(handshake.cipherList)'")
        }
        SSL_CTX_set_options(context, apns_SSL_OP_NO_RENEGOTIATION() | apns_SSL_OP_NO_COMPRESSION())
        // Partial writes report progress record by record; the output buffer may move between retries (it only
        // grows at the end, so the bytes being retried stay the same).
        _ = apns_SSL_CTX_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        apns_SSL_CTX_set_read_ahead(context, 1)
    }

    deinit {
        sessionToResume.withLock { address in SSL_SESSION_free(OpaquePointer(bitPattern: address)) }  // NULL: no-op
        SSL_CTX_free(pointer)
        alpnSelection?.deallocate()
    }

    /// Client: offers the remembered session on `ssl`, a new `SSL` not yet connected (`SSL_set_session` takes
    /// its own reference). The server resumes it or does a full handshake.
    func offerRememberedSession(to ssl: OpaquePointer) {
        sessionToResume.withLock { address in
            if let session = OpaquePointer(bitPattern: address) { _ = SSL_set_session(ssl, session) }
        }
    }

    /// Client: remembers `ssl`'s session for the next connections if it is resumable yet (with TLS 1.3 that is once
    /// the server's NewSessionTicket has been read, after the handshake); returns whether it was. Called only for
    /// connections that passed every check, so a resumed session was verified and pinned when it was made.
    func rememberSession(of ssl: OpaquePointer) -> Bool {
        guard let current = SSL_get_session(ssl), SSL_SESSION_is_resumable(current) == 1,
            let session = SSL_get1_session(ssl)
        else { return false }
        let replaced = sessionToResume.withLock { address in
            defer { address = UInt(bitPattern: session) }
            return address
        }
        SSL_SESSION_free(OpaquePointer(bitPattern: replaced))  // NULL: no-op
        return true
    }

    /// A client context: verification (system store or given CAs), ALPN offer, optional client certificate.
    convenience init(client configuration: TLSClientConfiguration) throws(TransportError) {
        let protocols = configuration.handshake.applicationProtocols
        try self.init(
            method: TLS_client_method(), isServer: false, handshake: configuration.handshake,
            requiredProtocols: protocols, pins: Set(configuration.pinnedSPKISHA256),
            connectTimeout: configuration.connectTimeout, alpnSelection: nil)
        try loadTrust(configuration.trustRoots)
        SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
        if !protocols.isEmpty {
            let wire = try Self.alpnWire(protocols)
            guard SSL_CTX_set_alpn_protos(pointer, wire, UInt32(wire.count)) == 0 else {  // 0 is success here
                throw TLSErrorOpenSSL.failure(.invalidConfiguration, "SSL_CTX_set_alpn_protos")
            }
        }
        if let identity = configuration.identity { try use(identity) }
    }

    /// A server context: identity, ALPN selection, optional client-certificate verification.
    convenience init(server configuration: TLSServerConfiguration) throws(TransportError) {
        let protocols = configuration.handshake.applicationProtocols
        let wire = protocols.isEmpty ? nil : try Self.alpnWire(protocols)
        try self.init(
            method: TLS_server_method(), isServer: true, handshake: configuration.handshake,
            requiredProtocols: [], pins: [], connectTimeout: 0, alpnSelection: wire)
        try use(configuration.identity)
        if let alpnSelection {
            SSL_CTX_set_alpn_select_cb(pointer, alpnSelectCallback, alpnSelection.baseAddress)
        }
        let context = "apns-bulk"
        _ = SSL_CTX_set_session_id_context(pointer, context, UInt32(context.utf8.count))
        switch configuration.clientCertificates {
        case .none:
            SSL_CTX_set_verify(pointer, SSL_VERIFY_NONE, nil)
        case .optional(let roots):
            try loadTrust(roots)
            SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
        case .required(let roots):
            try loadTrust(roots)
            SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
    }

    private func loadTrust(_ roots: TLSTrustRoots) throws(TransportError) {
        switch roots {
        case .system:
            guard SSL_CTX_set_default_verify_paths(pointer) == 1 else {
                throw TLSErrorOpenSSL.failure(.invalidConfiguration, "loading the system trust store")
            }
        case .pemFile(let path):
            try addTrusted(TLSCredentialLoader.certificates(pem: TLSCredentialLoader.readFile(path), source: path))
        case .pem(let text):
            try addTrusted(TLSCredentialLoader.certificates(pem: Array(text.utf8), source: "CA PEM text"))
        }
    }

    private func addTrusted(_ certificates: [OpenSSLCertificate]) throws(TransportError) {
        guard let store = SSL_CTX_get_cert_store(pointer) else {  // borrowed from the context
            throw TLSErrorOpenSSL.failure(.tlsFailure, "SSL_CTX_get_cert_store")
        }
        for certificate in certificates {
            guard X509_STORE_add_cert(store, certificate.pointer) == 1 else {  // the store takes its own reference
                throw TLSErrorOpenSSL.failure(.invalidConfiguration, "adding a trusted CA certificate")
            }
        }
    }

    private func use(_ identity: TLSIdentity) throws(TransportError) {
        let loaded = try TLSCredentialLoader.load(identity)
        guard let chain = apns_sk_X509_new_null() else {
            throw TLSErrorOpenSSL.failure(.tlsFailure, "sk_X509_new_null")
        }
        defer { apns_sk_X509_pop_free(chain) }
        for certificate in loaded.chain where X509_up_ref(certificate.pointer) == 1 {
            guard apns_sk_X509_push(chain, certificate.pointer) > 0 else {
                X509_free(certificate.pointer)
                throw TLSErrorOpenSSL.failure(.tlsFailure, "sk_X509_push")
            }
        }
        // Takes its own references to the leaf, the key and the chain; checks that the key fits the leaf.
        guard SSL_CTX_use_cert_and_key(pointer, loaded.leaf.pointer, loaded.key.pointer, chain, 1) == 1,
            SSL_CTX_check_private_key(pointer) == 1
        else {
            throw TLSErrorOpenSSL.failure(
                .invalidConfiguration, "certificate and private key do not match or are unusable")
        }
    }

    /// ALPN wire format: each protocol as a length byte followed by its bytes.
    private static func alpnWire(_ protocols: [String]) throws(TransportError) -> [UInt8] {
        var wire: [UInt8] = []
        for name in protocols {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                throw TransportError(.invalidConfiguration, "ALPN protocol '\(name)' must be 1 to 255 bytes")
            }
            wire.append(UInt8(bytes.count))
            wire += bytes
        }
        return wire
    }
}

/// Server ALPN: picks the first protocol of ours the client offered; none in common means no ALPN at all
/// (like a server that does not know h2), leaving the client to decide.
private let alpnSelectCallback: SSL_CTX_alpn_select_cb_func = { _, out, outLength, offered, offeredLength, argument in
    guard let out, let outLength, let offered, let argument else { return SSL_TLSEXT_ERR_NOACK }
    let length = argument.load(as: UInt32.self)
    let ours = argument.advanced(by: 4).assumingMemoryBound(to: UInt8.self)
    var selected: UnsafeMutablePointer<UInt8>?
    var selectedLength: UInt8 = 0
    let result = SSL_select_next_proto(&selected, &selectedLength, ours, length, offered, offeredLength)
    guard result == OPENSSL_NPN_NEGOTIATED, let selected else { return SSL_TLSEXT_ERR_NOACK }
    out.pointee = UnsafePointer(selected)  // points into our own list, which outlives the handshake
    outLength.pointee = selectedLength
    return SSL_TLSEXT_ERR_OK
}

// MARK: - TLSErrorOpenSSL

/// OpenSSL failures as `TransportError`s: the operation with the text of the one error-queue reader
/// (`OpenSSLError`), and credential failures of the crypto layer with the file they concern.
enum TLSErrorOpenSSL {
    /// `kind` with `operation` and the queued text; the queue ends empty.
    static func failure(_ kind: TransportError.Kind, _ operation: String) -> TransportError {
        let queued = OpenSSLError.drainQueue(fallback: "")
        return TransportError(kind, queued.isEmpty ? operation : "\(operation): \(queued)")
    }

    /// A credential the crypto layer refused, as a configuration error naming `source` (a path, or what the bytes
    /// were): `wrong PKCS#12 password: /path/client.p12: …`.
    static func credential(_ error: CryptoError, source: String) -> TransportError {
        TransportError(.invalidConfiguration, error.inFile(source).description)
    }
}
