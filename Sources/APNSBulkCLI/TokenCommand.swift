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

    @OptionGroup var providerKey: ProviderKeyOptions

    @Option(
        name: .customLong("issued-at"),
        help: ArgumentHelp(
            "Sign with this iat (UNIX epoch seconds) instead of now, to test expiry.", valueName: "seconds")
    )
    var issuedAt: Int64?

    mutating func validate() throws {
        providerKey.applyEnvironment()
        guard providerKey.keyFile != nil else { throw ValidationError("Missing --key <file> (or APNS_KEY_FILE).") }
        try providerKey.checkIdentifiers()
    }

    func run() throws {
        print(try providerKey.signer().sign(issuedAt: issuedAt ?? ProviderTokenCache.systemTime()))
    }
}
