import APNSCrypto
import ArgumentParser
import Foundation

/// `apns-bulk pin`: prints the SPKI-SHA256-BASE64 pin of every certificate in PEM files. Wiring only.
struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print the SPKI-SHA256-BASE64 pin of every certificate in PEM files.",
        discussion: """
            A pin is the base64 SHA-256 of a certificate's DER SubjectPublicKeyInfo, as App Transport Security \
            (NSPinnedDomains) and curl --pinnedpubkey sha256//<pin> use it; the same value as
              openssl x509 -noout -pubkey -in c.pem | openssl pkey -pubin -outform der \\
                | openssl dgst -sha256 -binary | openssl enc -base64

            Prints one line per certificate, in file order: the pin, two spaces, <file>#<n> (n counts from 1 \
            within the file) and the subject's common name (or its whole subject when it has none):
              Jz+Y0OcQpC3cm+p8RNhQhH0RYSXLrdc3u7RD1eVSgqc=  chain.pem#1 leaf.example.com
            With --quiet only the pins. Files whose certificates cannot be read are reported on stderr and the \
            others still printed.

            EXAMPLES
              apns-bulk pin server-chain.pem
              apns-bulk pin --quiet ca.pem backup-ca.pem

            \(ExitStatus.helpSection(ExitStatus.pinEntries))
            """
    )

    @Argument(
        help: ArgumentHelp("PEM files: single certificates or whole chains.", valueName: "cert.pem"),
        completion: ValueCompletion.pemCertificates)
    var files: [String]

    @Flag(name: .shortAndLong, help: "Print only the pins, one per line.")
    var quiet = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Give at least one PEM file.") }
    }

    func run() throws {
        var failed = false
        for file in files {
            do {
                let chain = try CertificateChain(contentsOfFile: file)
                for (index, certificate) in chain.certificates.enumerated() {
                    print(
                        quiet
                            ? certificate.spkiPin.base64
                            : "\(certificate.spkiPin)  \(file)#\(index + 1) \(certificate.label)")
                }
            } catch {
                let text = "\(error)"
                StandardStream.error(message: text.contains(file) ? text : "\(file): \(text)")
                failed = true
            }
        }
        if failed { throw ExitStatus.failure.code }
    }
}
