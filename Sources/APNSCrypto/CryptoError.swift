import APNSCore

/// A failure of APNSCrypto: which kind of failure (a private code with a short, stable summary) plus the context a
/// person needs to act on it: the file path, the offending value, or OpenSSL's own error text.
///
/// Two errors are equal when they are the same kind of failure; the context is detail for people and does not
/// take part in `==`. Tests and callers therefore match kinds directly:
/// `#expect(throws: CryptoError.keyNotOnP256) { try ProviderKey(pem: pem) }`.
public struct CryptoError: DetailedError, Sendable, Hashable {
    /// The kinds of failure; each raw value is the stable summary.
    private enum Code: String, Sendable, Hashable {
        case fileNotFound = "file not found"
        case fileUnreadable = "file unreadable"
        case notPEM = "not PEM"
        case malformedPEM = "malformed PEM"
        case notAPrivateKey = "not a private key"
        case notAPublicKey = "not a public key"
        case encryptedKey = "encrypted private key"
        case malformedKey = "malformed key"
        case keyNotEC = "not an EC key"
        case keyNotOnP256 = "EC key not on P-256"
        case invalidKeyID = "invalid key id"
        case invalidTeamID = "invalid team id"
        case malformedToken = "malformed provider token"
        case unsupportedTokenAlgorithm = "unsupported provider token algorithm"
        case refreshIntervalOutOfRange = "token refresh interval out of range"
        case invalidPin = "invalid SPKI pin"
        case noCertificates = "no certificates"
        case malformedCertificate = "malformed certificate"
        case malformedPKCS12 = "malformed PKCS#12"
        case wrongPassword = "wrong PKCS#12 password"
        case incompletePKCS12 = "incomplete PKCS#12"
        case keyDoesNotMatchCertificate = "private key does not match certificate"
        case invalidCertificateRequest = "invalid certificate request"
        case openSSLFailure = "OpenSSL failure"
    }

    private let code: Code
    /// What the failure is about: a path, the offending value, OpenSSL's error text. May be empty.
    public let context: String

    private init(_ code: Code, _ context: String = "") {
        self.code = code
        self.context = context
    }

    /// The short, stable summary of this kind of failure, without context (for example `not an EC key`).
    public var summary: String { code.rawValue }

    /// The context, as `DetailedError` names it.
    public var detail: String { context }

    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The same kind of failure with a different context.
    func with(context: String) -> CryptoError { CryptoError(code, context) }

    /// The same failure with `path: ` in front of its context.
    package func inFile(_ path: String) -> CryptoError {
        CryptoError(code, context.isEmpty ? path : "\(path): \(context)")
    }

    /// No file at the path.
    public static let fileNotFound = CryptoError(.fileNotFound)
    /// The file exists but could not be read (permissions, a directory, too large).
    public static let fileUnreadable = CryptoError(.fileUnreadable)
    /// The text holds no PEM block at all.
    public static let notPEM = CryptoError(.notPEM)
    /// A PEM block whose framing or base64 is broken.
    public static let malformedPEM = CryptoError(.malformedPEM)
    /// PEM, but no private key block in it (for example a certificate or a public key).
    public static let notAPrivateKey = CryptoError(.notAPrivateKey)
    /// PEM, but no `PUBLIC KEY` block in it.
    public static let notAPublicKey = CryptoError(.notAPublicKey)
    /// The private key is password-protected and no (or no working) password was given.
    public static let encryptedKey = CryptoError(.encryptedKey)
    /// A key block that OpenSSL could not decode.
    public static let malformedKey = CryptoError(.malformedKey)
    /// A key of another algorithm (RSA, Ed25519, ...) where an EC key is needed.
    public static let keyNotEC = CryptoError(.keyNotEC)
    /// An EC key on a curve other than P-256 (prime256v1), which ES256 requires.
    public static let keyNotOnP256 = CryptoError(.keyNotOnP256)
    /// A key id that is not exactly 10 ASCII letters or digits.
    public static let invalidKeyID = CryptoError(.invalidKeyID)
    /// A team id that is not exactly 10 ASCII letters or digits.
    public static let invalidTeamID = CryptoError(.invalidTeamID)
    /// Not a compact JWS with a decodable JSON header and claims carrying `kid`, `iss` and an integer `iat`.
    public static let malformedToken = CryptoError(.malformedToken)
    /// A JWS whose header names an algorithm other than ES256.
    public static let unsupportedTokenAlgorithm = CryptoError(.unsupportedTokenAlgorithm)
    /// A provider-token refresh interval outside 20...60 minutes.
    public static let refreshIntervalOutOfRange = CryptoError(.refreshIntervalOutOfRange)
    /// A pin that is not the base64 of 32 bytes (with or without a `sha256/` prefix).
    public static let invalidPin = CryptoError(.invalidPin)
    /// PEM text without a single certificate.
    public static let noCertificates = CryptoError(.noCertificates)
    /// Certificate bytes that OpenSSL could not decode.
    public static let malformedCertificate = CryptoError(.malformedCertificate)
    /// Bytes that are not a PKCS#12 archive, or one OpenSSL cannot open.
    public static let malformedPKCS12 = CryptoError(.malformedPKCS12)
    /// The PKCS#12 archive's integrity check failed with the given password.
    public static let wrongPassword = CryptoError(.wrongPassword)
    /// A PKCS#12 archive without a certificate or without a private key.
    public static let incompletePKCS12 = CryptoError(.incompletePKCS12)
    /// A private key that is not the key of the certificate it was given with.
    public static let keyDoesNotMatchCertificate = CryptoError(.keyDoesNotMatchCertificate)
    /// A certificate to issue with unusable parameters (empty name, malformed IP address, ...).
    public static let invalidCertificateRequest = CryptoError(.invalidCertificateRequest)
    /// An OpenSSL call failed unexpectedly (allocation, signing, encoding); the context holds OpenSSL's text.
    public static let openSSLFailure = CryptoError(.openSSLFailure)
}
