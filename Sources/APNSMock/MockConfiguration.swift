import APNSCore
import APNSCrypto

/// Everything a mock run is configured with: the provider keys it knows, which bundle ids each team may push to,
/// stream limits, development mode, the token registry, the faults and the seed.
public struct MockConfiguration: Sendable {
    /// The keys whose tokens the mock accepts (key id → team and verification key).
    public var keys: [MockProviderKey]
    /// Bundle ids every team may push to; empty means any bundle id.
    public var allowedBundleIDs: Set<String>
    /// Per-team bundle ids, replacing `allowedBundleIDs` for that team.
    public var allowedBundleIDsByTeam: [String: Set<String>]
    /// Per-key bundle ids (topic-scoped keys, `mock --key-topic`): a token of such a key may push to these only,
    /// whatever its team may; other topics answer 400 `TopicDisallowed`.
    public var allowedBundleIDsByKey: [String: Set<String>] = [:]
    /// SETTINGS_MAX_CONCURRENT_STREAMS once a connection has authenticated (APNs: 500 to 1000 are seen).
    public var maxConcurrentStreams: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS in the server's first SETTINGS, before authentication (APNs: 1).
    public var initialConcurrentStreams: Int
    /// Development (sandbox) mode: 200 answers carry `apns-unique-id`.
    public var developmentMode: Bool
    /// Tokens answered as unregistered, expired, foreign or bad.
    public var registry: TokenRegistry
    /// Faults to inject.
    public var faults: FaultPlan
    /// Seed of the generator behind faults and generated ids.
    public var seed: UInt64
    /// A token whose `iat` is more than this many seconds old is `ExpiredProviderToken` (APNs: one hour).
    public var tokenLifetimeSeconds: Int64
    /// A new token must be issued at least this many seconds after the one it replaces, else
    /// `TooManyProviderTokenUpdates` (APNs: 20 minutes).
    public var tokenUpdateIntervalSeconds: Int64
    /// How far in the future an `iat` may lie (client clocks run fast) before the token is `InvalidProviderToken`.
    public var allowedClockSkewSeconds: Int64
    /// Where to log every accepted notification (see `MockAcceptedLog`); nil for no log.
    public var acceptedLogPath: String?
    /// Refuse (403 `InvalidProviderToken`) a token whose `iat` is a JSON string of digits rather than a number.
    /// Off by default: APNs accepts such tokens (APNSwift signed them from 2022 to mid-2026).
    public var strictIssuedAt: Bool

    /// A mock server configuration; every setting has a default.
    public init(
        keys: [MockProviderKey] = [],
        allowedBundleIDs: Set<String> = [],
        allowedBundleIDsByTeam: [String: Set<String>] = [:],
        maxConcurrentStreams: Int = 1000,
        initialConcurrentStreams: Int = 1,
        developmentMode: Bool = false,
        registry: TokenRegistry = TokenRegistry(),
        faults: FaultPlan = .none,
        seed: UInt64 = 0x00A9_1500_5EED,
        tokenLifetimeSeconds: Int64 = 3600,
        tokenUpdateIntervalSeconds: Int64 = 1200,
        allowedClockSkewSeconds: Int64 = 60,
        strictIssuedAt: Bool = false
    ) {
        self.keys = keys
        self.allowedBundleIDs = allowedBundleIDs
        self.allowedBundleIDsByTeam = allowedBundleIDsByTeam
        self.maxConcurrentStreams = maxConcurrentStreams
        self.initialConcurrentStreams = initialConcurrentStreams
        self.developmentMode = developmentMode
        self.registry = registry
        self.faults = faults
        self.seed = seed
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.tokenUpdateIntervalSeconds = tokenUpdateIntervalSeconds
        self.allowedClockSkewSeconds = allowedClockSkewSeconds
        self.strictIssuedAt = strictIssuedAt
    }

    /// The bundle ids a token of `keyID` of team `teamID` may push to (empty: any): the key's own, if it is scoped,
    /// else the team's.
    public func allowedBundleIDs(forKey keyID: String, team teamID: String) -> Set<String> {
        allowedBundleIDsByKey[keyID] ?? allowedBundleIDs(forTeam: teamID)
    }

    /// The bundle ids a team may push to (empty: any).
    public func allowedBundleIDs(forTeam teamID: String) -> Set<String> {
        allowedBundleIDsByTeam[teamID] ?? allowedBundleIDs
    }

    /// Checks the settings that could not work: stream limits, key ids given twice, negative durations.
    public func validate() throws(MockConfigurationError) {
        guard initialConcurrentStreams >= 1, maxConcurrentStreams >= initialConcurrentStreams else {
            throw .configuration(
                "stream limits must satisfy 1 <= initial (\(initialConcurrentStreams)) <= maximum (\(maxConcurrentStreams))"
            )
        }
        var keyIDs: Set<String> = []
        for key in keys {
            guard ProviderIdentifier.isValid(key.keyID), ProviderIdentifier.isValid(key.teamID) else {
                throw .configuration(
                    "key id '\(key.keyID)' and team id '\(key.teamID)' must each be 10 letters or digits")
            }
            guard keyIDs.insert(key.keyID).inserted else {
                throw .configuration("key id \(key.keyID) is configured twice")
            }
        }
        guard tokenLifetimeSeconds > 0, tokenUpdateIntervalSeconds >= 0, allowedClockSkewSeconds >= 0 else {
            throw .configuration("token lifetime must be positive; update interval and clock skew not negative")
        }
    }
}

// MARK: - MockConfigurationError

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

    /// The detail text.
    public var description: String { detail }
}

// MARK: - MockProviderKey

/// One signing key the mock knows: its 10-character key id, the team it belongs to, and the public half of the
/// team's `.p8` key, which verifies the ES256 signatures of tokens naming this key id.
public struct MockProviderKey: Sendable {
    /// The signing key's id that provider tokens must carry as `kid`.
    public let keyID: String
    /// The team id that provider tokens must carry as `iss`.
    public let teamID: String
    /// The public key that verifies the tokens' signatures.
    public let publicKey: ProviderPublicKey

    /// A key the mock accepts provider tokens from.
    public init(keyID: String, teamID: String, publicKey: ProviderPublicKey) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKey = publicKey
    }
}
