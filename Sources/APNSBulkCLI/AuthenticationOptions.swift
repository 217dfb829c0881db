import APNSCrypto
import APNSTransport
import ArgumentParser
import Foundation

/// How `send` and `replay` prove who they are: a .p8 key (token-based trust) or a client certificate.
struct AuthenticationOptions: ParsableArguments {
    @OptionGroup var providerKey: ProviderKeyOptions

    @Option(
        name: .customLong("topic-key"),
        help: ArgumentHelp(
            "A provider key for one app's topics: BUNDLE-ID=FILE,key-id=ID,team-id=ID; repeatable. --key signs the rest.",
            valueName: "bundle-id=file,key-id=id,team-id=id"))
    var topicKeys: [String] = []

    @Option(
        name: .customLong("token-refresh"), parsing: .unconditional,
        help: ArgumentHelp("Minutes between provider-token re-signs, 20 to 60.", valueName: "minutes"))
    var tokenRefreshMinutes: Int = 50

    @Option(
        name: .customLong("cert"),
        help: ArgumentHelp(
            "Client certificate chain (PEM) for certificate-based trust; may hold the private key too.",
            valueName: "file"),
        completion: ValueCompletion.pemCertificates)
    var certificateFile: String?

    @Option(
        name: .customLong("cert-key"),
        help: ArgumentHelp(
            "The client certificate's private key (PEM), when it is not in the --cert file.", valueName: "file"),
        completion: ValueCompletion.pemPrivateKey)
    var certificateKeyFile: String?

    @Option(
        name: .customLong("p12"),
        help: ArgumentHelp(
            "Client certificate and key as PKCS#12; its password comes from APNS_P12_PASSWORD.", valueName: "file"),
        completion: ValueCompletion.pkcs12)
    var pkcs12File: String?

    mutating func validate() throws {
        let keyOnCommandLine = providerKey.keyFile
        let keyIDOnCommandLine = providerKey.keyID
        providerKey.applyEnvironment()
        let certificate = certificateFile != nil || pkcs12File != nil
        if certificate {
            if let keyOnCommandLine, let certificateFile, certificateKeyFile == nil {
                // curl's habit (--cert c.pem --key k.pem): here --key is the .p8 key of token-based trust.
                throw ValidationError(
                    "--key is the .p8 key of token-based trust; a client certificate's private key "
                        + "goes in --cert-key: --cert \(certificateFile) --cert-key \(keyOnCommandLine)")
            }
            guard topicKeys.isEmpty else {
                throw ValidationError(
                    "--topic-key is for token-based trust: use either it (with or without --key) or a client certificate."
                )
            }
            guard providerKey.keyFile == nil else {
                let why = keyOnCommandLine == nil ? " (APNS_KEY_FILE is set: unset it to use the certificate)" : ""
                throw ValidationError("Use either --key (token-based trust) or a client certificate, not both\(why).")
            }
            guard (certificateFile == nil) != (pkcs12File == nil) else {
                throw ValidationError("Use either --cert [--cert-key] or --p12.")
            }
            if certificateKeyFile != nil, certificateFile == nil {
                throw ValidationError("--cert-key goes with --cert.")
            }
            return
        }
        guard providerKey.keyFile != nil || !topicKeys.isEmpty else {
            throw ValidationError(
                "Missing credentials: --key/--key-id/--team-id (token-based trust) or --cert [--cert-key] or --p12.")
        }
        guard (20...60).contains(tokenRefreshMinutes) else {
            throw ValidationError("--token-refresh must be 20 to 60 minutes.")
        }
        if providerKey.keyFile != nil {
            guard providerKey.keyID != nil else { throw ValidationError("Missing --key-id <id> (or APNS_KEY_ID).") }
            guard providerKey.teamID != nil else { throw ValidationError("Missing --team-id <id> (or APNS_TEAM_ID).") }
            try providerKey.checkIdentifiers()
        } else if let keyID = keyIDOnCommandLine {
            throw ValidationError("--key-id \(keyID) goes with --key <file>; a --topic-key names its own key-id=.")
        }
        _ = try keySet()
    }

    /// The run's provider keys and the topics each covers (`--topic-key` and the default `--key`), after
    /// `validate`; nil with a client certificate.
    func keySet() throws -> ProviderKeySet? {
        guard certificateFile == nil, pkcs12File == nil else { return nil }
        var defaultKey: ProviderKeySet.Key?
        if let file = providerKey.keyFile, let keyID = providerKey.keyID, let teamID = providerKey.teamID {
            defaultKey = .init(file: file, keyID: keyID, teamID: teamID)
        }
        var entries: [TopicKeyOption] = []
        for text in topicKeys {
            do {
                entries.append(try TopicKeyOption(parsing: text, teamID: providerKey.teamID))
            } catch {
                throw ValidationError("--topic-key '\(text)': \(error)")
            }
        }
        do {
            return try ProviderKeySet(defaultKey: defaultKey, entries: entries)
        } catch {
            throw ValidationError("--topic-key: \(error)")
        }
    }

    /// One authentication per provider key of `keySet()` (key 0 first), each with its own signer; reads every key
    /// file, so that a missing or wrong one stops the command before it
    /// starts (exit status 1), naming the file.
    func resolveKeys(_ set: ProviderKeySet) throws -> [APNSClientConfiguration.Authentication] {
        try set.keys.map { key in
            let signer = try ProviderTokenSigner(
                key: ProviderKey(contentsOfFile: key.file), keyID: key.keyID, teamID: key.teamID)
            return .providerToken(signer, refreshIntervalSeconds: Int64(tokenRefreshMinutes) * 60)
        }
    }

    /// The authentication mode and the TLS client identity it needs, if any. Reads the PEM certificate and key files
    /// first, so that a missing or wrong file stops the command before it starts (exit status 1); `--cert` alone
    /// takes the key from the same file, and says so on stderr.
    func resolve() throws -> (APNSClientConfiguration.Authentication, TLSIdentity?) {
        if let certificateFile {
            let pair = try OptionFileError.reading(certificateKeyFile == nil ? "--cert" : "--cert/--cert-key") {
                try CertificateKeyPair(chainPath: certificateFile, keyPath: certificateKeyFile)
            }
            if pair.keyIsInChainFile {
                let note =
                    "apns-bulk: using the private key in \(pair.keyPath) (\(pair.privateKey.algorithm)) for its certificate \(pair.chain.leaf.label)\n"
                StandardStream.error(note)
            }
            return (.certificate, .pemFiles(certificateChainPath: pair.chainPath, privateKeyPath: pair.keyPath))
        }
        if let pkcs12File {
            let password = ProcessInfo.processInfo.environment["APNS_P12_PASSWORD"] ?? ""
            // Read once, when the TLS context is built (before any file is created): a wrong password or a file that
            // is not PKCS#12 stops the command there, with status 1 and the path named.
            return (.certificate, .pkcs12File(path: pkcs12File, password: password))
        }
        return (.providerToken(try providerKey.signer(), refreshIntervalSeconds: Int64(tokenRefreshMinutes) * 60), nil)
    }
}

// MARK: - EnvironmentDefault

/// Reads option values that may also come from environment variables (secrets and CI settings); an option given
/// on the command line always wins.
enum EnvironmentDefault {
    static func value(_ option: String?, _ variable: String) -> String? {
        if let option, !option.isEmpty { return option }
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else { return nil }
        return value
    }
}
