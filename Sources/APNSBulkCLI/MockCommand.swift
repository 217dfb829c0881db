import APNSCrypto
import APNSMock
import APNSPipeline
import APNSTransport
import ArgumentParser
import Foundation

/// `apns-bulk mock`: runs the mock APNs server until SIGINT/SIGTERM (or `--duration`), then prints its counters.
/// Wiring only: options, building the configuration (the `Configuration` section below), start, wait, stop.
struct MockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mock",
        abstract: "Run a mock APNs server (HTTP/2 over TLS) that validates requests like APNs.",
        discussion: """
            Answers POST /3/device/<token> with APNs's statuses and reasons: checks headers, the provider token \
            (ES256 JWT, verified with the configured public keys) or the client certificate, the topic, the \
            payload and the device token. Starts every connection at 1 concurrent stream and raises the limit \
            (SETTINGS_MAX_CONCURRENT_STREAMS) after the first authenticated request, as APNs does. Streams a client \
            opens before it has acknowledged that first limit are served (RFC 9113 6.5.3), unless \
            --strict-initial-streams refuses them (REFUSED_STREAM) to test a client's resending.

            Device tokens ending in dead answer 410 Unregistered (with a timestamp), 0bad 400 BadDeviceToken, \
            f0f0 400 DeviceTokenNotForTopic (--no-suffix-rules turns this off; --registry FILE lists tokens).

            Without --cert, a throwaway CA and a certificate for 127.0.0.1, localhost and ::1 are generated at \
            start-up: --write-ca FILE saves the CA so clients can trust it (curl --cacert FILE, \
            apns-bulk send --ca-file FILE). Logs "apns-bulk mock listening on https://HOST:PORT" to stderr once \
            listening; with --port-file the port is also written to a file (use it with port 0).

            Faults (--fault, repeatable or comma-separated): 429=0.05, 500=every:100, 503=0.01, \
            expired-token=every:1000, goaway=after:500, drop=0.001, latency=5ms, latency=2..20ms, \
            lower-streams=after:100:to:10.

            On exit prints the counters to stderr and writes them as JSON to --counters FILE. With \
            --log-accepted FILE, each notification accepted with a 200 is logged there as one JSON line (token, \
            topic, apns_id, with --development apns_unique_id, connection, stream, answered), written before its \
            answer leaves, for audits against a result file; a 200 held back by latency when its connection ends \
            is logged with "answered":false.

            Keys: each --key-id goes with the --team-id and the --key (.p8) or --public-key file in the same \
            position; one --team-id serves every key. --key-topic KEY-ID=BUNDLE-ID scopes a key to its bundle \
            ids (a topic-scoped key: TopicDisallowed for any other). A connection carries one team's tokens: a \
            token of another team on it answers 403 InvalidProviderToken. --key, --key-id and --team-id may also come from \
            APNS_KEY_FILE, APNS_KEY_ID and APNS_TEAM_ID. The sample TEST key (generated test material, see \
            samples/keys/README.md) has key id TEST123456 and team id TEAMID1234.

            EXAMPLES
              apns-bulk mock --listen 127.0.0.1:0 --port-file port \\
                --write-ca mock-ca.pem --key-id TEST123456 --team-id TEAMID1234 \\
                --key samples/keys/AuthKey_TEST123456.p8 --topic com.example.app \\
                --counters counters.json
              curl --http2 --cacert mock-ca.pem \\
                -H "authorization: bearer $(apns-bulk token ...)" \\
                -H "apns-topic: com.example.app" -d '{"aps":{"alert":"hi"}}' \\
                https://127.0.0.1:$(cat port)/3/device/<hex token>
              apns-bulk mock --key-id TEST123456 --team-id TEAMID1234 \\
                --public-key samples/keys/AuthKey_TEST123456.pub.pem \\
                --fault 429=0.05,goaway=after:500 --duration 60

            \(ExitStatus.helpSection(ExitStatus.mockEntries))
            """
    )

    @Option(help: ArgumentHelp("Address to listen on; port 0 picks a free port.", valueName: "host:port"))
    var listen = "127.0.0.1:2197"

    @Option(
        help: ArgumentHelp("Server certificate chain (PEM, leaf first). Default: generated.", valueName: "file"),
        completion: ValueCompletion.pemCertificates)
    var cert: String?

    @Option(
        name: .customLong("cert-key"), help: ArgumentHelp("The --cert private key (PEM).", valueName: "file"),
        completion: ValueCompletion.pemPrivateKey)
    var certKey: String?

    @Option(
        name: .customLong("write-ca"),
        help: ArgumentHelp("Write the generated CA certificate (PEM) here.", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var writeCA: String?

    @Option(
        name: .customLong("port-file"),
        help: ArgumentHelp("Write the bound port here once listening.", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var portFile: String?

    @Option(
        name: .customLong("key-id"),
        help: ArgumentHelp("A provider key id (kid) to accept; repeatable.", valueName: "id"))
    var keyIDs: [String] = []

    @Option(
        name: .customLong("team-id"),
        help: ArgumentHelp("The team id (iss) of each --key-id; repeatable.", valueName: "id"))
    var teamIDs: [String] = []

    @Option(
        name: .customLong("key"),
        help: ArgumentHelp("A .p8 key whose public half verifies tokens; repeatable.", valueName: "file"),
        completion: ValueCompletion.p8Key)
    var keyFiles: [String] = []

    @Option(
        name: .customLong("public-key"),
        help: ArgumentHelp("A public key PEM that verifies tokens; repeatable.", valueName: "file"),
        completion: ValueCompletion.pemPublicKey)
    var publicKeyFiles: [String] = []

    @Option(
        name: .customLong("topic"),
        help: ArgumentHelp("A bundle id clients may push to; repeatable. Default: any.", valueName: "bundle-id"))
    var topics: [String] = []

    @Option(
        name: .customLong("key-topic"),
        help: ArgumentHelp(
            "Scope a key to a bundle id (KEY-ID=BUNDLE-ID); repeatable. Its tokens get TopicDisallowed elsewhere.",
            valueName: "key-id=bundle-id"))
    var keyTopics: [String] = []

    @Option(name: .customLong("max-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS after authentication.")
    var maxStreams = 1000

    @Option(name: .customLong("initial-streams"), help: "SETTINGS_MAX_CONCURRENT_STREAMS before authentication.")
    var initialStreams = 1

    @Flag(
        name: .customLong("strict-initial-streams"),
        help: "Refuse streams over --initial-streams even when opened before the client saw the limit."
    )
    var strictInitialStreams = false

    @Flag(help: "Development (sandbox) environment: 200 answers carry apns-unique-id.")
    var development = false

    @Option(
        help: ArgumentHelp("Token registry file (unregistered, expired, wrong-topic, bad entries).", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var registry: String?

    @Flag(name: .customLong("no-suffix-rules"), help: "Do not treat tokens ending in dead, 0bad, f0f0 specially.")
    var noSuffixRules = false

    @Option(
        name: .customLong("fault"), help: ArgumentHelp("A fault to inject; repeatable (see above).", valueName: "spec"))
    var faults: [String] = []

    @Option(help: "Seed of the fault and id generator (runs with the same seed inject the same faults).")
    var seed: UInt64?

    @Option(
        name: .customLong("client-ca"),
        help: ArgumentHelp("Accept client certificates issued by this CA (PEM).", valueName: "file"),
        completion: ValueCompletion.pemCertificates)
    var clientCA: String?

    @Option(
        name: .customLong("counters"),
        help: ArgumentHelp("Write the counters as JSON here on exit.", valueName: "file"),
        completion: ValueCompletion.anyFile)
    var countersFile: String?

    @Option(
        name: .customLong("log-accepted"),
        help: ArgumentHelp(
            "Log each notification answered 200 here (one JSON line: token, topic, apns_id), written before the answer leaves.",
            valueName: "file"), completion: ValueCompletion.anyFile)
    var logAccepted: String?

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Flag(
        name: .customLong("strict-iat"),
        help: "Refuse tokens whose iat is a string (\"1700000000\") rather than a number; APNs accepts them."
    )
    var strictIAT = false

    mutating func validate() throws {
        try validateOptions()
    }

    func run() throws {
        let server: MockServer
        do {
            server = try MockServer.start(
                configuration: try makeConfiguration(), tls: tlsOptions(), host: listenAddress.host,
                port: listenAddress.port,
                initialLimitEnforcement: strictInitialStreams ? .immediately : .onceAcknowledged
            )
        } catch {
            Self.log(StandardStream.errorLine("\(error)"))
            throw ExitStatus.failure.code
        }
        do {
            if let writeCA, let pem = server.caPEM { try Self.writeAtomically(pem, to: writeCA) }
            if let portFile { try Self.writeAtomically("\(server.port)\n", to: portFile) }
        } catch {
            server.stop()
            Self.log(StandardStream.errorLine("\(error)"))
            throw ExitStatus.failure.code
        }
        Self.log("apns-bulk mock listening on \(server.url)")
        waitForStop()
        let counters = server.stop()
        Self.log(counters.summary, newline: false)
        if let countersFile {
            do {
                try Self.writeAtomically(counters.json + "\n", to: countersFile)
            } catch {
                Self.log(StandardStream.errorLine("cannot write --counters \(countersFile): \(error)"))
                throw ExitStatus.failure.code
            }
        }
    }

    /// Blocks until SIGINT or SIGTERM arrives (dispatch signal sources, not a signal handler) or `--duration`
    /// has passed.
    private func waitForStop() {
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        if let duration {
            _ = stop.wait(timeout: .now() + duration)
        } else {
            stop.wait()
        }
        sources.forEach { $0.cancel() }
    }

    static func log(_ line: String, newline: Bool = true) {
        StandardStream.error(newline ? line + "\n" : line)
    }

    /// Writes through a temporary file and a rename, so a script polling for the file never reads half of it; a
    /// device, a FIFO or a symbolic link given as the path (/dev/null, /dev/stdout) is written in place (`OutputFile`).
    static func writeAtomically(_ text: String, to path: String) throws {
        try OutputFile.write(Array(text.utf8), toPath: path)
    }
}

// MARK: - Configuration

/// Turning `apns-bulk mock`'s options into a `MockConfiguration` and `MockServerTLS`: the cross-option rules
/// (usage errors), then loading keys, the registry and certificates (start-up errors).
extension MockCommand {
    /// The `--listen` value split into host and port.
    struct ListenAddress {
        let host: String
        let port: Int

        init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Parses `HOST:PORT`, `[IPV6]:PORT` or a bare `PORT` (on 127.0.0.1).
        init?(_ text: String) {
            var host = "127.0.0.1"
            var portText = Substring(text)
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]") else { return nil }
                host = String(text[text.index(after: text.startIndex)..<close])
                let rest = text[text.index(after: close)...]
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            } else if let colon = text.lastIndex(of: ":") {
                guard text.firstIndex(of: ":") == colon else { return nil }  // IPv6 needs brackets
                host = String(text[..<colon])
                portText = text[text.index(after: colon)...]
            }
            guard !host.isEmpty, !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let port = Int(portText), (0...65_535).contains(port)
            else { return nil }
            self.host = host
            self.port = port
        }
    }

    var listenAddress: ListenAddress {
        ListenAddress(listen) ?? ListenAddress(host: "127.0.0.1", port: 2197)  // validate() rejected anything else
    }

    mutating func validateOptions() throws {
        guard ListenAddress(listen) != nil else {
            throw ValidationError("--listen '\(listen)' is not HOST:PORT ([IPV6]:PORT for IPv6; port 0 to 65535).")
        }
        guard (cert == nil) == (certKey == nil) else { throw ValidationError("Give --cert and --cert-key together.") }
        if cert != nil, writeCA != nil {
            throw ValidationError(
                "--write-ca writes the generated CA; with --cert there is none (clients trust your CA).")
        }
        if keyIDs.isEmpty, let keyID = EnvironmentDefault.value(nil, "APNS_KEY_ID") { keyIDs = [keyID] }
        if teamIDs.isEmpty, let teamID = EnvironmentDefault.value(nil, "APNS_TEAM_ID") { teamIDs = [teamID] }
        if keyFiles.isEmpty, publicKeyFiles.isEmpty, let keyFile = EnvironmentDefault.value(nil, "APNS_KEY_FILE") {
            keyFiles = [keyFile]
        }
        if keyIDs.isEmpty && clientCA == nil {
            throw ValidationError(
                """
                Give the keys whose tokens to accept (--key-id, --team-id and --key or --public-key), or \
                --client-ca for certificate-based trust; the sample TEST key: --key samples/keys/AuthKey_TEST123456.p8 \
                --key-id TEST123456 --team-id TEAMID1234
                """)
        }
        let keyMaterial = keyFiles.count + publicKeyFiles.count
        guard keyMaterial == keyIDs.count else {
            throw ValidationError(
                "Give one --key or --public-key per --key-id (\(keyIDs.count) key ids, \(keyMaterial) key files).")
        }
        if keyIDs.count > 1 && !keyFiles.isEmpty && !publicKeyFiles.isEmpty {
            throw ValidationError("With several keys, give either --key or --public-key files, not a mix.")
        }
        guard
            teamIDs.count == keyIDs.count || (teamIDs.count == 1 && !keyIDs.isEmpty)
                || (teamIDs.isEmpty && keyIDs.isEmpty)
        else {
            throw ValidationError(
                "Give one --team-id for all keys, or one per --key-id (\(keyIDs.count) key ids, \(teamIDs.count) team ids)."
            )
        }
        for id in keyIDs + teamIDs {
            guard ProviderIdentifier.isValid(id) else {
                throw ValidationError("'\(id)' is not a 10-character key or team id.")
            }
        }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds.") }
        guard initialStreams >= 1, maxStreams >= initialStreams else {
            throw ValidationError("Need 1 <= --initial-streams (\(initialStreams)) <= --max-streams (\(maxStreams)).")
        }
        do {
            _ = try FaultPlan(parsing: faults)
        } catch {
            throw ValidationError(error.description)
        }
        _ = try keyScopes()
    }

    /// `--key-topic`'s bundle ids by key id; each key id must be one of `--key-id`.
    func keyScopes() throws -> [String: Set<String>] {
        var scopes: [String: Set<String>] = [:]
        for value in keyTopics {
            let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[1].isEmpty else {
                throw ValidationError("--key-topic '\(value)': expected KEY-ID=BUNDLE-ID")
            }
            guard keyIDs.contains(parts[0]) else {
                throw ValidationError("--key-topic '\(value)': \(parts[0]) is not one of the --key-id values")
            }
            scopes[parts[0], default: []].insert(parts[1])
        }
        return scopes
    }

    /// The configuration from the options; reads the key and registry files (errors name the file).
    func makeConfiguration() throws -> MockConfiguration {
        var configuration = MockConfiguration(
            keys: try loadKeys(),
            allowedBundleIDs: Set(topics),
            maxConcurrentStreams: maxStreams,
            initialConcurrentStreams: initialStreams,
            developmentMode: development,
            registry: try loadRegistry(),
            faults: try FaultPlan(parsing: faults)
        )
        if let seed { configuration.seed = seed }
        configuration.allowedBundleIDsByKey = try keyScopes()
        configuration.acceptedLogPath = logAccepted
        configuration.strictIssuedAt = strictIAT
        return configuration
    }

    func tlsOptions() -> MockServerTLS {
        let trust = clientCA.map { TLSTrustRoots.pemFile(path: $0) }
        if let cert, let certKey {
            return .pemFiles(certificateChain: cert, privateKey: certKey, clientCertificateTrust: trust)
        }
        var hosts = MockServerTLS.defaultHosts
        let host = listenAddress.host
        if !hosts.contains(host), host != "0.0.0.0", host != "::" { hosts.append(host) }
        return .generated(hosts: hosts, clientCertificateTrust: trust)
    }

    private func loadKeys() throws -> [MockProviderKey] {
        let files = keyFiles.map { ($0, true) } + publicKeyFiles.map { ($0, false) }
        var keys: [MockProviderKey] = []
        for (index, keyID) in keyIDs.enumerated() {
            let (file, isPrivate) = files[index]
            let teamID = teamIDs.count == 1 ? teamIDs[0] : teamIDs[index]
            let publicKey: ProviderPublicKey
            do {
                publicKey =
                    isPrivate
                    ? try ProviderKey(contentsOfFile: file).publicKey : try ProviderPublicKey(contentsOfFile: file)
            } catch {
                throw MockCommandError("\(file): \(error)")
            }
            keys.append(MockProviderKey(keyID: keyID, teamID: teamID, publicKey: publicKey))
        }
        return keys
    }

    private func loadRegistry() throws -> TokenRegistry {
        guard let registry else { return TokenRegistry(usesSuffixRules: !noSuffixRules) }
        let text: String
        do {
            text = try String(contentsOfFile: registry, encoding: .utf8)
        } catch {
            throw MockCommandError("\(registry): cannot read the token registry (\(error.localizedDescription))")
        }
        do {
            return try TokenRegistry(parsing: text, usesSuffixRules: !noSuffixRules)
        } catch {
            throw MockCommandError("\(registry): \(error)")
        }
    }
}

/// A start-up failure of `apns-bulk mock` worth one line on stderr.
struct MockCommandError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
