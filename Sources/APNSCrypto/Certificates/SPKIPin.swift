import Foundation

/// An identity pin (seed 003): the SHA-256 of a certificate's DER-encoded SubjectPublicKeyInfo, written as base64
/// (`SPKI-SHA256-BASE64`, 44 characters), the value App Transport Security's `NSPinnedDomains`, curl's
/// `--pinnedpubkey sha256//...` and this pipeline compute:
/// `openssl x509 -noout -pubkey -in c.pem | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | openssl enc -base64`
public struct SPKIPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte SHA-256 digest.
    public let sha256: [UInt8]

    /// Parses a pin: the base64 of 32 bytes (44 characters), optionally prefixed `sha256/` or `sha256//` as
    /// curl writes them; surrounding white space is ignored. Throws `invalidPin`.
    public init(_ text: String) throws(CryptoError) {
        var body = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        for prefix in ["sha256//", "sha256/"] where body.lowercased().hasPrefix(prefix) {
            body = body.dropFirst(prefix.count)
            break
        }
        guard body.utf8.count == 44, let digest = Data(base64Encoded: String(body)), digest.count == 32,
            digest.base64EncodedString() == body
        else {
            throw CryptoError.invalidPin.with(context: "\"\(text.prefix(80))\" is not the base64 of a 32-byte SHA-256")
        }
        sha256 = [UInt8](digest)
    }

    /// A pin from its 32-byte digest; throws `invalidPin` for any other length.
    public init(sha256Digest: [UInt8]) throws(CryptoError) {
        guard sha256Digest.count == 32 else {
            throw CryptoError.invalidPin.with(context: "a digest of \(sha256Digest.count) bytes, expected 32")
        }
        sha256 = sha256Digest
    }

    /// The pin of a DER SubjectPublicKeyInfo (the body of a `PUBLIC KEY` PEM block).
    public init(subjectPublicKeyInfoDER: [UInt8]) throws(CryptoError) {
        sha256 = try OpenSSLDigest.sha256(subjectPublicKeyInfoDER)
    }

    /// The pin of a DER certificate's public key; throws `malformedCertificate` for bytes that are not one.
    public init(certificateDER: [UInt8]) throws(CryptoError) {
        try self.init(subjectPublicKeyInfoDER: OpenSSLCertificate(der: certificateDER).subjectPublicKeyInfoDER())
    }

    /// `SPKI-SHA256-BASE64` of a DER certificate: what TLS code calls on each peer certificate.
    public static func sha256Base64(certificateDER: [UInt8]) throws(CryptoError) -> String {
        try SPKIPin(certificateDER: certificateDER).base64
    }

    /// The pins of every certificate in PEM text (a whole chain file), in order.
    public static func pins(pem: String) throws(CryptoError) -> [SPKIPin] {
        try CertificateChain(pem: pem).certificates.map(\.spkiPin)
    }

    /// The pins of every certificate in a PEM file (a whole chain file), in order.
    public static func pins(contentsOfFile path: String) throws(CryptoError) -> [SPKIPin] {
        try CertificateChain(contentsOfFile: path).certificates.map(\.spkiPin)
    }

    /// The pin as 44 characters of standard base64 with padding.
    public var base64: String { Data(sha256).base64EncodedString() }

    /// The pin as base64 of the SHA-256 digest.
    public var description: String { base64 }
}

// MARK: - PinSet

/// The pins a connection accepts (seed 003): a chain is acceptable when any of its certificates (leaf,
/// intermediate or root) has a public key in the set. Pin more than one key so that a rotation does not lock
/// clients out. An empty set matches nothing: "no pinning" is the absence of a `PinSet`, not an empty one.
public struct PinSet: Sendable, Hashable {
    /// The pins accepted.
    public let pins: Set<SPKIPin>

    /// A set of the given pins.
    public init(_ pins: some Sequence<SPKIPin>) {
        self.pins = Set(pins)
    }

    /// Parses each text with `SPKIPin.init(_:)`; throws `invalidPin` naming the first bad one.
    public init(parsing texts: some Sequence<String>) throws(CryptoError) {
        var pins: Set<SPKIPin> = []
        for text in texts { pins.insert(try SPKIPin(text)) }
        self.pins = pins
    }

    /// Whether no pin is set, so that pinning is off.
    public var isEmpty: Bool { pins.isEmpty }

    /// Whether `pin` is one of the pins accepted.
    public func contains(_ pin: SPKIPin) -> Bool {
        pins.contains(pin)
    }

    /// Whether the public key of this DER certificate is pinned; bytes that are not a certificate do not match.
    public func matches(certificateDER: [UInt8]) -> Bool {
        guard !pins.isEmpty, let pin = try? SPKIPin(certificateDER: certificateDER) else { return false }
        return pins.contains(pin)
    }

    /// Whether any of these DER certificates (a peer's chain, in any order) has a pinned public key.
    public func matches(anyOf certificateDERs: [[UInt8]]) -> Bool {
        certificateDERs.contains { matches(certificateDER: $0) }
    }
}
