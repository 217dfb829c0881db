import APNSCrypto
import APNSMock
import APNSTransport
import ArgumentParser
import Foundation

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
                  let port = Int(portText), (0...65_535).contains(port) else { return nil }
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
            throw ValidationError("--write-ca writes the generated CA; with --cert there is none (clients trust your CA).")
        }
        if keyIDs.isEmpty, let keyID = EnvironmentDefault.value(nil, "APNS_KEY_ID") { keyIDs = [keyID] }
        if teamIDs.isEmpty, let teamID = EnvironmentDefault.value(nil, "APNS_TEAM_ID") { teamIDs = [teamID] }
        if keyFiles.isEmpty, publicKeyFiles.isEmpty, let keyFile = EnvironmentDefault.value(nil, "APNS_KEY_FILE") {
            keyFiles = [keyFile]
        }
        if keyIDs.isEmpty && clientCA == nil {
            throw ValidationError("""
                Give the keys whose tokens to accept (--key-id, --team-id and --key or --public-key), or \
                --client-ca for certificate-based trust. The sample TEST key: --key samples/keys/AuthKey_TEST123456.p8 \
                --key-id TEST123456 --team-id TEAMID1234
                """)
        }
        let keyMaterial = keyFiles.count + publicKeyFiles.count
        guard keyMaterial == keyIDs.count else {
            throw ValidationError("Give one --key or --public-key per --key-id (\(keyIDs.count) key ids, \(keyMaterial) key files).")
        }
        if keyIDs.count > 1 && !keyFiles.isEmpty && !publicKeyFiles.isEmpty {
            throw ValidationError("With several keys, give either --key or --public-key files, not a mix.")
        }
        guard teamIDs.count == keyIDs.count || (teamIDs.count == 1 && !keyIDs.isEmpty) || (teamIDs.isEmpty && keyIDs.isEmpty) else {
            throw ValidationError("Give one --team-id for all keys, or one per --key-id (\(keyIDs.count) key ids, \(teamIDs.count) team ids).")
        }
        for id in keyIDs + teamIDs {
            guard ProviderIdentifier.isValid(id) else { throw ValidationError("'\(id)' is not a 10-character key or team id.") }
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
        configuration.acceptedLogPath = logAccepted
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
                publicKey = isPrivate ? try ProviderKey(contentsOfFile: file).publicKey : try ProviderPublicKey(contentsOfFile: file)
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
