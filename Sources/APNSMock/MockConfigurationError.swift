/// Why a mock-server setting could not be used: a bad fault spec, a bad token-registry line, a bad key entry.
///
/// The description is short and stable and names the offending input, so the CLI can print it as is.
public struct MockConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case faultSpec
        case registryLine
        case configuration
    }

    private let code: Code
    /// What was wrong, naming the input (for example `fault spec '429=2': rate must be between 0 and 1`).
    public let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// A fault spec that does not follow the grammar documented on `FaultSpec`.
    static func faultSpec(_ spec: some StringProtocol, _ problem: String) -> MockConfigurationError {
        MockConfigurationError(.faultSpec, "fault spec '\(spec)': \(problem)")
    }

    /// A token-registry line that does not follow the format documented on `TokenRegistry`.
    static func registryLine(_ number: Int, _ problem: String) -> MockConfigurationError {
        MockConfigurationError(.registryLine, "token registry line \(number): \(problem)")
    }

    /// Any other inconsistent setting.
    static func configuration(_ problem: String) -> MockConfigurationError {
        MockConfigurationError(.configuration, problem)
    }

    /// Whether this error came from parsing a fault spec.
    public var isFaultSpecError: Bool { code == .faultSpec }
    /// Whether this error came from a token-registry line.
    public var isRegistryError: Bool { code == .registryLine }

    public var description: String { detail }
}
