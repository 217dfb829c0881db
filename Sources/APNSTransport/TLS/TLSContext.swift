import APNSCrypto

/// A client TLS context: the configuration loaded into OpenSSL once (trust store, client certificate, ALPN,
/// cipher policy), shared by every connection the pool opens. Building it reads files and may fail; do it at
/// start-up, not on the event loop's hot path.
public final class TLSClientContext: Sendable {
    public let configuration: TLSClientConfiguration
    let context: TLSContextOpenSSL

    /// Loads `configuration`. Pins are parsed with `SPKIPin` (so curl's `sha256//` prefix is accepted) and kept
    /// normalized; a malformed pin is a configuration error.
    public init(_ configuration: TLSClientConfiguration) throws(TransportError) {
        var normalized = configuration
        normalized.pinnedSPKISHA256 = []
        for text in configuration.pinnedSPKISHA256 {
            do throws(CryptoError) {
                normalized.pinnedSPKISHA256.append(try SPKIPin(text).base64)
            } catch {
                throw TransportError(.invalidConfiguration, "pin: \(error)")
            }
        }
        self.configuration = normalized
        context = try TLSContextOpenSSL(client: normalized)
    }
}

/// A server TLS context: identity, ALPN selection and client-certificate policy loaded into OpenSSL once, shared
/// by every accepted connection (the mock server).
public final class TLSServerContext: Sendable {
    public let configuration: TLSServerConfiguration
    let context: TLSContextOpenSSL

    public init(_ configuration: TLSServerConfiguration) throws(TransportError) {
        self.configuration = configuration
        context = try TLSContextOpenSSL(server: configuration)
    }
}
