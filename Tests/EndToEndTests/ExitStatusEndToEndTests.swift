import Foundation
import Testing

/// The exit status of each kind of failure, as the help and the README promise: a missing or unreadable file named
/// by any option is 1 (before anything is written), a usage error is 64, a TLS handshake that can never succeed is 4.
@Suite("exit statuses end to end", .serialized)
struct ExitStatusEndToEndTests {
    static func tls(_ name: String) -> String { Tool.path("Tests/Fixtures/tls/\(name)") }

    /// Token credentials and an endpoint nothing listens on: enough to pass parsing; never reached.
    static let unreachable = [
        "--endpoint", "https://127.0.0.1:9", "--key", MockProcess.keyFile, "--key-id", MockProcess.keyID,
        "--team-id", MockProcess.teamID, "--topic", MockProcess.topic, "--progress", "none",
    ]

    @Test("validate: a missing --template is 1, like a missing input, not a usage error")
    func validateMissingTemplate() throws {
        let missing = "/nonexistent/apns-bulk/template.json"
        let run = try Tool.run([
            "validate", Tool.path("samples/campaign.csv"), "--template", missing,
            "--topic", MockProcess.topic,
        ])
        #expect(run.status == 1, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains(missing))
        #expect(!run.stderr.contains("Usage:"), "not reported as a usage error: \(run.stderr)")
        let input = try Tool.run(["validate", "/nonexistent/apns-bulk/campaign.ndjson", "--topic", MockProcess.topic])
        #expect(input.status == 1, "a missing input file: exit \(input.status): \(input.stderr)")
    }

    @Test("validate: an invalid option value is a usage error (64)")
    func validateUsageError() throws {
        let run = try Tool.run(["validate", Tool.path("samples/campaign.ndjson"), "--priority", "7"])
        #expect(run.status == 64, "exit \(run.status): \(run.stderr)")
    }

    @Test(
        "send: a missing --template, --cert, --cert-key or --ca-file is 1, and no result file is started",
        arguments: ["template", "cert", "cert-key", "ca-file"])
    func sendMissingFile(option: String) throws {
        let out = try TemporaryDirectory()
        let missing = "/nonexistent/apns-bulk/\(option).pem"
        var arguments = ["send", Tool.path("samples/campaign.ndjson"), "--results", out.file("results.ndjson")]
        switch option {
        case "template": arguments += ["--template", missing] + Self.unreachable
        case "ca-file": arguments += ["--ca-file", missing] + Self.unreachable
        case "cert":
            arguments += ["--cert", missing, "--cert-key", Self.tls("client.key"), "--endpoint", "https://127.0.0.1:9"]
        default:
            arguments += [
                "--cert", Self.tls("client-chain.pem"), "--cert-key", missing, "--endpoint", "https://127.0.0.1:9",
            ]
        }
        let run = try Tool.run(arguments + ["--progress", "none"])
        #expect(run.status == 1, "--\(option): exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains(missing), "--\(option): \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.file("results.ndjson")), "--\(option): nothing was started")
        #expect(!FileManager.default.fileExists(atPath: out.file("results.ndjson.journal")), "--\(option)")
    }

    @Test("send: a server certificate no trusted CA signed stops early: 4")
    func untrustedServer() throws {
        let mock = try MockProcess()
        let out = try TemporaryDirectory()
        var arguments = mock.clientArguments
        if let index = arguments.firstIndex(of: "--ca-file") { arguments[index + 1] = Self.tls("other-ca.pem") }
        let run = try Tool.run(
            ["send", Tool.path("samples/campaign.ndjson"), "--results", out.file("r.ndjson")] + arguments)
        #expect(run.status == 4, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("certificate verify failed"), "\(run.stderr)")
        _ = try mock.stop()
    }

    @Test("send: a client certificate the server refuses (its intermediate missing) stops early: 4, at once")
    func refusedClientCertificate() throws {
        let mock = try MockProcess(["--client-ca", Self.tls("root-ca.pem")])
        let out = try TemporaryDirectory()
        let started = Date()
        let run = try Tool.run([
            "send", Tool.path("samples/campaign.ndjson"), "--results", out.file("r.ndjson"),
            "--endpoint", "https://127.0.0.1:\(mock.port)", "--ca-file", mock.caFile,
            "--cert", Self.tls("client.pem"), "--cert-key", Self.tls("client.key"), "--topic", "com.example.app",
            "--progress", "none",
        ])
        #expect(run.status == 4, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("client certificate"), "\(run.stderr)")
        #expect(Date().timeIntervalSince(started) < 20, "stopped without waiting for timeouts or reconnects")
        _ = try mock.stop()
    }
}
