/// A client TLS context: the configuration loaded into OpenSSL once (trust store, client certificate, ALPN,
/// cipher policy), shared by every connection the pool opens. Building it reads files and may fail; do it at
/// start-up, not on the event loop's hot path.
public final class TLSClientContext: Sendable {
    public let configuration: TLSClientConfiguration
    let context: TLSContextOpenSSL

    public init(_ configuration: TLSClientConfiguration) throws(TransportError) {
        for pin in configuration.pinnedSPKISHA256 where !Self.isPlausiblePin(pin) {
            throw TransportError(.invalidConfiguration,
                                 "'\(pin)' is not an SPKI-SHA256-BASE64 pin (44 base64 characters ending in '=')")
        }
        self.configuration = configuration
        context = try TLSContextOpenSSL(client: configuration)
    }

    /// A SHA-256 digest in base64: 43 base64 characters and one '=' of padding.
    private static func isPlausiblePin(_ pin: String) -> Bool {
        let bytes = Array(pin.utf8)
        guard bytes.count == 44, bytes[43] == UInt8(ascii: "=") else { return false }
        return bytes[..<43].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"): return true
            default: return false
            }
        }
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
