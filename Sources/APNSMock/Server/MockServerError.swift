import APNSCore

/// Why a `MockServer` could not start: a bad configuration, unusable TLS material, or a socket that would not
/// listen. The description is short and stable and carries the underlying library's own text.
public struct MockServerError: DetailedError, Hashable, Sendable {
    private enum Code: String, Hashable, Sendable {
        case configuration = "invalid mock configuration"
        case certificate = "cannot prepare the server certificate"
        case tls = "cannot set up TLS"
        case listen = "cannot listen"
        case eventLoop = "cannot start the event loop"
    }

    private let code: Code
    /// The specifics: the offending setting, OpenSSL's text, `strerror`.
    public let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    static func configuration(_ detail: String) -> MockServerError { MockServerError(.configuration, detail) }
    static func certificate(_ detail: String) -> MockServerError { MockServerError(.certificate, detail) }
    static func tls(_ detail: String) -> MockServerError { MockServerError(.tls, detail) }
    static func listen(_ detail: String) -> MockServerError { MockServerError(.listen, detail) }
    static func eventLoop(_ detail: String) -> MockServerError { MockServerError(.eventLoop, detail) }

    /// Whether the configuration itself was refused (as opposed to TLS material or the socket).
    public var isConfigurationError: Bool { code == .configuration }
    /// Whether binding or listening failed (address in use, no permission).
    public var isListenError: Bool { code == .listen }

    public var summary: String { code.rawValue }
}
