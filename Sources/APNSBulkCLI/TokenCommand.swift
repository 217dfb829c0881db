import APNSCrypto
import ArgumentParser

/// `apns-bulk token`: signs one APNs provider token (ES256 JWT) with a `.p8` key and prints it. Wiring only: the
/// options (with environment fallbacks) and the output.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a fresh APNs provider token (ES256 JWT) signed with a .p8 key.",
        usage: "apns-bulk token [--key <file> --key-id <id> --team-id <id>] [<options>]",
        discussion: """
            Prints the compact JWT and a newline to stdout: header {"alg":"ES256","kid":<key id>}, claims \
            {"iss":<team id>,"iat":<now, epoch seconds>}. APNs accepts a token for 60 minutes and rejects \
            re-signing more often than every 20 (send and mock share one token per team and re-sign at 50).

            Each option may instead come from the environment; an option on the command line wins:
              --key      APNS_KEY_FILE
              --key-id   APNS_KEY_ID
              --team-id  APNS_TEAM_ID

            EXAMPLES
              apns-bulk token --key AuthKey_ABC123DEFG.p8 \\
                  --key-id ABC123DEFG --team-id DEF123GHIJ
              export APNS_KEY_FILE=AuthKey_ABC123DEFG.p8 \\
                  APNS_KEY_ID=ABC123DEFG APNS_TEAM_ID=DEF123GHIJ
              curl --http2 -H "authorization: bearer $(apns-bulk token)" ...

            \(ExitStatus.helpSection(ExitStatus.tokenEntries))
            """
    )

    @Option(name: .customLong("key"), help: ArgumentHelp("The .p8 signing key (PKCS#8 PEM, EC P-256).", valueName: "file"),
            completion: ValueCompletion.p8Key)
    var keyFile: String?

    @Option(name: .customLong("key-id"), help: ArgumentHelp("The key's 10-character id (kid).", valueName: "id"))
    var keyID: String?

    @Option(name: .customLong("team-id"), help: ArgumentHelp("The 10-character team id (iss).", valueName: "id"))
    var teamID: String?

    @Option(
        name: .customLong("issued-at"),
        help: ArgumentHelp("Sign with this iat (UNIX epoch seconds) instead of now, to test expiry.", valueName: "seconds")
    )
    var issuedAt: Int64?

    mutating func validate() throws {
        keyFile = EnvironmentDefault.value(keyFile, "APNS_KEY_FILE")
        keyID = EnvironmentDefault.value(keyID, "APNS_KEY_ID")
        teamID = EnvironmentDefault.value(teamID, "APNS_TEAM_ID")
        guard keyFile != nil else { throw ValidationError("Missing --key <file> (or APNS_KEY_FILE).") }
        guard let keyID else { throw ValidationError("Missing --key-id <id> (or APNS_KEY_ID).") }
        guard let teamID else { throw ValidationError("Missing --team-id <id> (or APNS_TEAM_ID).") }
        do {
            try ProviderIdentifier.validateKeyID(keyID)
            try ProviderIdentifier.validateTeamID(teamID)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        guard let keyFile, let keyID, let teamID else { throw ExitStatus.failure.code }  // set by validate()
        let signer = try ProviderTokenSigner(key: ProviderKey(contentsOfFile: keyFile), keyID: keyID, teamID: teamID)
        print(try signer.sign(issuedAt: issuedAt ?? ProviderTokenCache.systemTime()))
    }
}
