import APNSCrypto
import COpenSSL
import Foundation

/// Owns one `X509` certificate (freed with `X509_free` in `deinit`).
final class TLSCertificateHandle {
    /// The `X509 *`, borrowed by callers for the duration of a call.
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        X509_free(pointer)
    }
}

/// Owns one `EVP_PKEY` private key (freed with `EVP_PKEY_free` in `deinit`).
final class TLSPrivateKeyHandle {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        EVP_PKEY_free(pointer)
    }
}

/// A loaded `TLSIdentity`: the leaf, the rest of the chain, the key.
struct TLSLoadedIdentity {
    let leaf: TLSCertificateHandle
    let chain: [TLSCertificateHandle]
    let key: TLSPrivateKeyHandle
}

/// Loads PEM and PKCS#12 material into OpenSSL objects, once, when a context is built (file reads block).
enum TLSCredentialsOpenSSL {
    static func load(_ identity: TLSIdentity) throws(TransportError) -> TLSLoadedIdentity {
        switch identity {
        case .pemFiles(let chainPath, let keyPath, let passphrase):
            return try fromPEM(chain: readFile(chainPath), key: readFile(keyPath), passphrase: passphrase,
                               source: chainPath)
        case .pem(let chain, let key, let passphrase):
            return try fromPEM(chain: Array(chain.utf8), key: Array(key.utf8), passphrase: passphrase, source: "PEM text")
        case .pkcs12File(let path, let password):
            return try fromPKCS12(readFile(path), password: password, source: path)
        case .pkcs12(let bytes, let password):
            return try fromPKCS12(bytes, password: password, source: "PKCS#12 bytes")
        }
    }

    /// Every certificate in PEM text, in order.
    static func certificates(pem: [UInt8], source: String) throws(TransportError) -> [TLSCertificateHandle] {
        ERR_clear_error()
        var result: [TLSCertificateHandle] = []
        try withMemoryBIO(pem, source: source) { bio in
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                result.append(TLSCertificateHandle(taking: certificate))
            }
        }
        ERR_clear_error()  // the read that ends the loop queues "no start line"
        guard !result.isEmpty else {
            throw TransportError(.invalidConfiguration, "\(source): no PEM certificate found")
        }
        return result
    }

    static func readFile(_ path: String) throws(TransportError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TransportError(.invalidConfiguration, "cannot read \(path)")
        }
        return [UInt8](data)
    }

    private static func fromPEM(chain: [UInt8], key: [UInt8], passphrase: String?, source: String)
        throws(TransportError) -> TLSLoadedIdentity {
        var certificates = try certificates(pem: chain, source: source)
        let leaf = certificates.removeFirst()
        let privateKey = try withMemoryBIO(key, source: source) { bio throws(TransportError) -> TLSPrivateKeyHandle in
            // Always pass a callback: OpenSSL's default one would prompt on the terminal for an encrypted key.
            let password = passphrase ?? ""
            let key = password.withCString { text in
                PEM_read_bio_PrivateKey(bio, nil, passphraseCallback, UnsafeMutableRawPointer(mutating: text))
            }
            guard let key else {
                let hint = passphrase == nil ? " (encrypted keys need a passphrase)" : ""
                throw TLSErrorOpenSSL.failure(.invalidConfiguration, "\(source): no usable private key\(hint)")
            }
            return TLSPrivateKeyHandle(taking: key)
        }
        return TLSLoadedIdentity(leaf: leaf, chain: certificates, key: privateKey)
    }

    private static func fromPKCS12(_ bytes: [UInt8], password: String, source: String)
        throws(TransportError) -> TLSLoadedIdentity {
        if let identity = try parsePKCS12(bytes, password: password, source: source) { return identity }
        // Keychain Access exports use RC2-40 or 3DES, which OpenSSL 3 keeps in its legacy provider. Loading it
        // adds algorithms and changes no defaults (the default provider must then be loaded explicitly).
        OpenSSLLegacyProviders.load()
        if let identity = try parsePKCS12(bytes, password: password, source: source) { return identity }
        throw TLSErrorOpenSSL.failure(.invalidConfiguration, "\(source): cannot read PKCS#12 (wrong password?)")
    }

    private static func parsePKCS12(_ bytes: [UInt8], password: String, source: String)
        throws(TransportError) -> TLSLoadedIdentity? {
        ERR_clear_error()
        let p12: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 else { throw TLSErrorOpenSSL.failure(.invalidConfiguration, "\(source): not PKCS#12") }
        defer { PKCS12_free(p12) }
        var key: OpaquePointer?
        var certificate: OpaquePointer?
        var extra: OpaquePointer?
        guard PKCS12_parse(p12, password, &key, &certificate, &extra) == 1 else { return nil }
        // PKCS12_parse hands over ownership of all three.
        let keyHandle = key.map { TLSPrivateKeyHandle(taking: $0) }
        let leaf = certificate.map { TLSCertificateHandle(taking: $0) }
        var chain: [TLSCertificateHandle] = []
        if let extra {
            for index in 0..<apns_sk_X509_num(extra) {
                if let item = apns_sk_X509_value(extra, index), X509_up_ref(item) == 1 {
                    chain.append(TLSCertificateHandle(taking: item))
                }
            }
            apns_sk_X509_pop_free(extra)
        }
        guard let keyHandle, let leaf else {
            throw TransportError(.invalidConfiguration, "\(source): PKCS#12 without both a certificate and a key")
        }
        return TLSLoadedIdentity(leaf: leaf, chain: chain, key: keyHandle)
    }

    private static func withMemoryBIO<Result>(_ bytes: [UInt8], source: String,
                                              _ body: (OpaquePointer) throws(TransportError) -> Result)
        throws(TransportError) -> Result {
        let bio: OpaquePointer? = bytes.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { throw TLSErrorOpenSSL.failure(.invalidConfiguration, "\(source): BIO_new_mem_buf") }
        defer { BIO_free(bio) }
        // BIO_new_mem_buf does not copy: `bytes` is only read inside `body`, while `bytes` is alive.
        return try body(bio)
    }
}

/// Copies the passphrase handed as `userdata` into OpenSSL's buffer (pem_password_cb); never prompts.
private let passphraseCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?)
    -> Int32 = { buffer, size, _, userdata in
        guard let buffer, let userdata, size > 0 else { return 0 }
        let text = userdata.assumingMemoryBound(to: CChar.self)
        let length = min(Int(strlen(text)), Int(size))
        buffer.update(from: text, count: length)
        return Int32(length)
    }
