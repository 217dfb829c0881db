import APNSCore
import APNSCrypto
import APNSTransport
import ArgumentParser
import Foundation

/// Where and how `send` and `replay` connect: endpoint, trust, pins, proxy, connection count, timeouts.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .customLong("endpoint"),
        help: ArgumentHelp(
            "production, development, or https://host:port (or APNS_ENDPOINT).", valueName: "where"),
        completion: ValueCompletion.endpoints)
    var endpoint: String?

    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "Trust these CA certificates (PEM) instead of the system store (a mock's CA) (or APNS_CA_FILE).",
            valueName: "file"),
        completion: ValueCompletion.pemCertificates)
    var caFile: String?

    @Option(
        name: .customLong("pin"),
        help: ArgumentHelp(
            "SPKI-SHA256-BASE64 pin; repeat it. A connection is refused unless a certificate in the chain matches one.",
            valueName: "pin"))
    var pins: [String] = []

    @Option(
        name: .customLong("proxy"),
        help: ArgumentHelp("HTTP CONNECT proxy http://[user:pass@]host:port (or HTTPS_PROXY).", valueName: "url"))
    var proxy: String?

    @Option(
        name: .customLong("resolve"),
        help: ArgumentHelp(
            "Dial these addresses for HOST:PORT instead of resolving it, as curl does (the endpoint's, or the proxy's with --proxy); repeat it for other hosts. IPv6 in brackets: [::1].",
            valueName: "host:port:addr[,addr…]"))
    var resolve: [String] = []

    @Option(
        name: .customLong("connections"), parsing: .unconditional,
        help: ArgumentHelp(
            "Persistent HTTP/2 connections at most (1 to 64). Three open first; more open as the rate needs them, each carrying about --streams-per-connection requests, spares opened ahead of need.",
            valueName: "count"))
    var connections: Int = 32

    @Option(
        name: .customLong("streams-per-connection"), parsing: .unconditional,
        help: ArgumentHelp(
            "Requests in flight on one connection before the pool opens another (1 to 1000): what a dropped connection puts in doubt.",
            valueName: "count"))
    var streamsPerConnection: Int = 128

    @Option(
        name: .customLong("request-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds without an answer before that request is cancelled and reported in doubt.", valueName: "seconds"))
    var requestTimeout: Double = 30

    /// The endpoints `--endpoint` accepts by name, as the completions offer them (`APNSEndpoint(parsing:)` also takes
    /// prod, dev, sandbox and an https:// URL).
    static let endpointNames = ["production", "development"]

    mutating func validate() throws {
        endpoint = EnvironmentDefault.value(endpoint, "APNS_ENDPOINT")
        caFile = EnvironmentDefault.value(caFile, "APNS_CA_FILE")
        guard (1...64).contains(connections) else { throw ValidationError("--connections must be 1 to 64.") }
        guard (1...1000).contains(streamsPerConnection) else {
            throw ValidationError("--streams-per-connection must be 1 to 1000.")
        }
        guard requestTimeout > 0 else { throw ValidationError("--request-timeout must be positive.") }
        for pin in pins {
            do { _ = try PinSet(parsing: [pin]) } catch { throw ValidationError("--pin \(pin): \(error)") }
        }
        if let endpoint {
            do { _ = try APNSEndpoint(parsing: endpoint) } catch { throw ValidationError("--endpoint: \(error)") }
        }
        _ = try resolveOverrides()
    }

    /// The `--resolve` entries, each error naming the option and the value.
    func resolveOverrides() throws -> ResolveOverrides {
        var entries: [ResolveOverride] = []
        for value in resolve {
            do {
                let entry = try ResolveOverride(parsing: value)
                entries.append(entry)
                _ = try ResolveOverrides(entries)
            } catch {
                throw ValidationError("--resolve '\(value)': \(error)")
            }
        }
        return try ResolveOverrides(entries)
    }

    /// The pool configuration for these options and credentials.
    func clientConfiguration(authentication: AuthenticationOptions) throws -> APNSClientConfiguration {
        let (auth, identity) = try authentication.resolve()
        return try clientConfiguration(auth, identity: identity)
    }

    /// The pool configurations of a run: one, or with `--topic-key` one per provider key (each its own pool of up
    /// to `--connections` connections), and which topics each key covers.
    func runClients(authentication: AuthenticationOptions) throws -> RunClients {
        guard let set = try authentication.keySet(), set.keys.count > 1 || set.routes.defaultKey == nil else {
            return RunClients(
                configurations: [try clientConfiguration(authentication: authentication)], labels: [], routes: nil)
        }
        let configurations = try authentication.resolveKeys(set).map { try clientConfiguration($0, identity: nil) }
        return RunClients(configurations: configurations, labels: set.keys.map(\.label), routes: set.routes)
    }

    private func clientConfiguration(
        _ auth: APNSClientConfiguration.Authentication, identity: TLSIdentity?
    ) throws -> APNSClientConfiguration {
        let where_ = try APNSEndpoint(parsing: endpoint ?? "production")
        var tls = TLSClientConfiguration()
        if let caFile {
            _ = try OptionFileError.reading("--ca-file") { try CertificateChain(contentsOfFile: caFile) }  // status 1
            tls.trustRoots = .pemFile(path: caFile)
        }
        tls.pinnedSPKISHA256 = pins
        tls.identity = identity
        var configuration = APNSClientConfiguration(endpoint: where_, authentication: auth, tls: tls)
        configuration.maximumConnections = connections
        configuration.streamsPerConnection = streamsPerConnection
        configuration.requestTimeout = requestTimeout
        if let proxy = EnvironmentDefault.value(proxy, "HTTPS_PROXY") ?? EnvironmentDefault.value(nil, "https_proxy") {
            configuration.proxy = try ProxyConfiguration(parsing: proxy)
        }
        configuration.resolve = try resolveOverrides()
        // An entry that names neither the host dialed nor its port would silently resolve the name after all.
        let dialed = configuration.proxy.map { ($0.host, $0.port) } ?? (where_.host, where_.port)
        for entry in configuration.resolve.entries where !entry.matches(host: dialed.0, port: dialed.1) {
            let what = configuration.proxy == nil ? "the endpoint" : "the proxy"
            throw ValidationError(
                "--resolve '\(entry)': \(what) is \(ResolveOverride.hostPort(dialed.0, dialed.1)), not \(ResolveOverride.hostPort(entry.host, entry.port))"
            )
        }
        return configuration
    }
}

// MARK: - RunClients

/// The connection pools a run needs: one configuration per provider key (one, without `--topic-key`), the keys'
/// names for messages, and the routes from topics to keys (nil: one key covers every topic).
struct RunClients {
    var configurations: [APNSClientConfiguration]
    let labels: [String]
    let routes: TopicKeyRoutes?

    /// The first key's configuration (the default key's, when there is one): endpoint and connection settings,
    /// which every key's share.
    var primary: APNSClientConfiguration { configurations[0] }
}
