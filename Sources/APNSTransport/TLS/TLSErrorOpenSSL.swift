import APNSCrypto

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
