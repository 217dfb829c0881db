import APNSCore

/// A failure of APNSCrypto: which kind of failure (an `ErrorKind` with a short, stable summary) plus the context a
/// person needs to act on it: the file path, the offending value, or OpenSSL's own error text.
///
/// Two errors are equal when they are the same kind of failure; the context is detail for people and does not
/// take part in `==`. Tests and callers therefore match kinds directly:
/// `#expect(throws: CryptoError.keyNotOnP256) { try ProviderKey(pem: pem) }`.
public struct CryptoError: KindedError, Sendable, Hashable {
    /// What went wrong, without the context; each kind is one of the static errors below.
    public typealias Kind = ErrorKind<CryptoError>

    /// The kind of failure.
    public let kind: Kind
    /// What the failure is about: a path, the offending value, OpenSSL's error text. May be empty.
    public let context: String

    private init(_ kind: Kind, _ context: String) {
        self.kind = kind
        self.context = context
    }

    /// A kind of failure with no context, told by its short, stable summary (for example `not an EC key`).
    private init(_ summary: String) { self.init(Kind(summary), "") }

    /// The context, as `DetailedError` names it.
    public var detail: String { context }

    /// Two errors are equal when their kind is equal, whatever the detail.
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.kind == rhs.kind }
    /// Hashes the kind only, in line with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The same kind of failure with a different context.
    func with(context: String) -> CryptoError { CryptoError(kind, context) }

    /// The same failure with `path: ` in front of its context.
    package func inFile(_ path: String) -> CryptoError {
        CryptoError(kind, context.isEmpty ? path : "\(path): \(context)")
    }

    /// No file at the path.
    public static let fileNotFound = CryptoError("file not found")
    /// The file exists but could not be read (permissions, a directory, too large).
    public static let fileUnreadable = CryptoError("file unreadable")
    /// The text holds no PEM block at all.
    public static let notPEM = CryptoError("not PEM")
    /// A PEM block whose framing or base64 is broken.
    public static let malformedPEM = CryptoError("malformed PEM")
    /// PEM, but no private key block in it (for example a certificate or a public key).
    public static let notAPrivateKey = CryptoError("not a private key")
    /// PEM, but no `PUBLIC KEY` block in it.
    public static let notAPublicKey = CryptoError("not a public key")
    /// The private key is password-protected and no (or no working) password was given.
    public static let encryptedKey = CryptoError("encrypted private key")
    /// A key block that OpenSSL could not decode.
    public static let malformedKey = CryptoError("malformed key")
    /// A key of another algorithm (RSA, Ed25519, ...) where an EC key is needed.
    public static let keyNotEC = CryptoError("not an EC key")
    /// An EC key on a curve other than P-256 (prime256v1), which ES256 requires.
    public static let keyNotOnP256 = CryptoError("EC key not on P-256")
    /// A key id that is not exactly 10 ASCII letters or digits.
    public static let invalidKeyID = CryptoError("invalid key id")
    /// A team id that is not exactly 10 ASCII letters or digits.
    public static let invalidTeamID = CryptoError("invalid team id")
    /// Not a compact JWS with a decodable JSON header and claims carrying `kid`, `iss` and an integer `iat`.
    public static let malformedToken = CryptoError("malformed provider token")
    /// A JWS whose header names an algorithm other than ES256.
    public static let unsupportedTokenAlgorithm = CryptoError("unsupported provider token algorithm")
    /// A provider-token refresh interval outside 20...60 minutes.
    public static let refreshIntervalOutOfRange = CryptoError("token refresh interval out of range")
    /// A pin that is not the base64 of 32 bytes (with or without a `sha256/` prefix).
    public static let invalidPin = CryptoError("invalid SPKI pin")
    /// PEM text without a single certificate.
    public static let noCertificates = CryptoError("no certificates")
    /// Certificate bytes that OpenSSL could not decode.
    public static let malformedCertificate = CryptoError("malformed certificate")
    /// Bytes that are not a PKCS#12 archive, or one OpenSSL cannot open.
    public static let malformedPKCS12 = CryptoError("malformed PKCS#12")
    /// The PKCS#12 archive's integrity check failed with the given password.
    public static let wrongPassword = CryptoError("wrong PKCS#12 password")
    /// A PKCS#12 archive without a certificate or without a private key.
    public static let incompletePKCS12 = CryptoError("incomplete PKCS#12")
    /// A private key that is not the key of the certificate it was given with.
    public static let keyDoesNotMatchCertificate = CryptoError("private key does not match certificate")
    /// A certificate to issue with unusable parameters (empty name, malformed IP address, ...).
    public static let invalidCertificateRequest = CryptoError("invalid certificate request")
    /// An OpenSSL call failed unexpectedly (allocation, signing, encoding); the context holds OpenSSL's text.
    public static let openSSLFailure = CryptoError("OpenSSL failure")
}
