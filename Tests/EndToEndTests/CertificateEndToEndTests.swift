import Foundation
import Testing

/// Certificate-based trust with the built executable against `apns-bulk mock --client-ca`: `--cert` with a PEM
/// file that holds the chain and the key (as curl takes it), `--cert` without a key anywhere, and `--p12` refused.
@Suite("client certificates end to end", .serialized)
struct CertificateEndToEndTests {
    static func tls(_ name: String) -> String { Tool.path("Tests/Fixtures/tls/\(name)") }

    /// The fixture client chain and key, concatenated into one file.
    static func combinedPEM(in directory: TemporaryDirectory) throws -> String {
        let text =
            try String(contentsOfFile: tls("client-chain.pem"), encoding: .utf8)
            + String(contentsOfFile: tls("client.key"), encoding: .utf8)
        let path = directory.file("client-combined.pem")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("--cert alone with a combined PEM: accepted, the key used is named, the campaign is sent")
    func combinedPEM() throws {
        let mock = try MockProcess(["--client-ca", Self.tls("root-ca.pem")])
        let out = try TemporaryDirectory()
        let combined = try Self.combinedPEM(in: out)
        let results = out.file("results.ndjson")
        let run = try Tool.run([
            "send", Tool.path("samples/campaign.ndjson"), "--results", results,
            "--endpoint", "https://127.0.0.1:\(mock.port)", "--ca-file", mock.caFile,
            "--cert", combined, "--topic", "com.example.app", "--progress", "none",
        ])
        #expect(run.status == 2, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("using the private key in \(combined)"), "\(run.stderr)")
        let outcomes = Results.outcomes(try Results.read(results))
        #expect(outcomes.values.filter { $0 == "delivered" }.count == 8, "\(outcomes)")
        _ = try mock.stop()
    }

    @Test("--cert alone with a chain but no key: 1, saying where the key is missing")
    func chainWithoutKey() throws {
        let out = try TemporaryDirectory()
        let chain = Self.tls("client-chain.pem")
        let run = try Tool.run([
            "send", Tool.path("samples/campaign.ndjson"), "--results", out.file("results.ndjson"),
            "--endpoint", "https://127.0.0.1:9", "--cert", chain, "--topic", "com.example.app", "--progress", "none",
        ])
        #expect(run.status == 1, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains(chain) && run.stderr.contains("without a private key"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.file("results.ndjson")))
    }

    @Test(
        "--p12 with a wrong APNS_P12_PASSWORD: 1, saying once that the password is wrong and naming the file; a file that is not PKCS#12: 1, not called a wrong password"
    )
    func pkcs12WrongPassword() throws {
        let out = try TemporaryDirectory()
        func send(p12 path: String, password: String) throws -> (status: Int32, stderr: String) {
            let run = try Tool.run(
                [
                    "send", Tool.path("samples/campaign.ndjson"), "--results", out.file("results.ndjson"),
                    "--endpoint", "https://127.0.0.1:9", "--p12", path, "--topic", "com.example.app", "--progress",
                    "none",
                ], environment: ["APNS_P12_PASSWORD": password])
            return (run.status, run.stderr)
        }
        let p12 = Self.tls("client-legacy.p12")
        let wrong = try send(p12: p12, password: "not-the-password")
        #expect(wrong.status == 1, "exit \(wrong.status): \(wrong.stderr)")
        #expect(wrong.stderr.contains("wrong PKCS#12 password: \(p12)"), "\(wrong.stderr)")
        #expect(wrong.stderr.components(separatedBy: "wrong PKCS#12 password").count == 2, "said once: \(wrong.stderr)")
        let notPKCS12 = Self.tls("client.pem")
        let malformed = try send(p12: notPKCS12, password: "apns-test")
        #expect(malformed.status == 1, "exit \(malformed.status): \(malformed.stderr)")
        #expect(malformed.stderr.contains("malformed PKCS#12: \(notPKCS12)"), "\(malformed.stderr)")
        #expect(!malformed.stderr.contains("password"), "\(malformed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.file("results.ndjson")))
    }
}
