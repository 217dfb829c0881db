import APNSCrypto
import ArgumentParser

/// The provider key options `send`, `replay` and `token` share: the .p8 key, its id and the team id, each with its
/// environment fallback, the checks of the two ids, and the signer they make.
struct ProviderKeyOptions: ParsableArguments {
    @Option(
        name: .customLong("key"),
        help: ArgumentHelp(
            "The .p8 signing key (PKCS#8 PEM, EC P-256) for token-based trust (or APNS_KEY_FILE).", valueName: "file"),
        completion: ValueCompletion.p8Key)
    var keyFile: String?

    @Option(
        name: .customLong("key-id"),
        help: ArgumentHelp(
            "The key's 10-character id, the token's kid (or APNS_KEY_ID).", valueName: "id"))
    var keyID: String?

    @Option(
        name: .customLong("team-id"),
        help: ArgumentHelp(
            "The 10-character team id, the token's iss (or APNS_TEAM_ID).", valueName: "id"))
    var teamID: String?

    /// Fills what the command line left out from APNS_KEY_FILE, APNS_KEY_ID and APNS_TEAM_ID (an option on the
    /// command line wins).
    mutating func applyEnvironment() {
        keyFile = EnvironmentDefault.value(keyFile, "APNS_KEY_FILE")
        keyID = EnvironmentDefault.value(keyID, "APNS_KEY_ID")
        teamID = EnvironmentDefault.value(teamID, "APNS_TEAM_ID")
    }

    /// Checks that the key id and the team id are given and well-formed (after `applyEnvironment`).
    func checkIdentifiers() throws {
        guard let keyID else { throw ValidationError("Missing --key-id <id> (or APNS_KEY_ID).") }
        guard let teamID else { throw ValidationError("Missing --team-id <id> (or APNS_TEAM_ID).") }
        // The option named in front, as every error does: "--key-id: invalid key id: …".
        do { try ProviderIdentifier.validateKeyID(keyID) } catch {
            throw ValidationError("--key-id: \(error.description)")
        }
        do { try ProviderIdentifier.validateTeamID(teamID) } catch {
            throw ValidationError("--team-id: \(error.description)")
        }
    }

    /// Signs with the key file for the two ids (after `applyEnvironment`); a missing or wrong key file throws its
    /// own error (exit status 1).
    func signer() throws -> ProviderTokenSigner {
        guard let keyFile, let keyID, let teamID else { throw ValidationError("Missing --key, --key-id or --team-id.") }
        let key = try OptionFileError.reading("--key") { try ProviderKey(contentsOfFile: keyFile) }
        return try ProviderTokenSigner(key: key, keyID: keyID, teamID: teamID)
    }
}
