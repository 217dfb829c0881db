import Foundation
import Testing

@testable import APNSTransport

/// A command-line tool run for a test, its output collected in a temporary file (polled while the event loop
/// turns in the same thread). Terminated, if still running, when the test ends.
final class ToolRun {
    let process = Process()
    let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("apns-tls-\(UUID().uuidString).txt")
        .path

    /// Keeps the tool's standard input open (s_server quits at end of input); nil gives it /dev/null.
    private let input: Pipe?

    init(_ arguments: [String], keepInputOpen: Bool = false) throws {
        guard FileManager.default.createFile(atPath: outputPath, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        input = keepInputOpen ? Pipe() : nil
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    func stop() {
        if process.isRunning { process.terminate() }
        // s_server can ignore SIGTERM mid-handshake: give it a moment, then SIGKILL, so waiting is bounded.
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? input?.fileHandleForWriting.close()
        try? FileManager.default.removeItem(atPath: outputPath)
    }
}

func toolExists(_ name: String) -> Bool {
    ["/usr/bin/", "/usr/local/bin/", "/bin/"].contains { FileManager.default.isExecutableFile(atPath: $0 + name) }
}

@Suite("TLS interop with the openssl and curl CLIs")
struct TLSInteropTests {
    @Test("openssl s_client completes a verified handshake with ALPN h2 against our server")
    func sClientAgainstServer() throws {
        try #require(toolExists("openssl"))
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let run = try ToolRun([
            "openssl", "s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", "localhost",
            "-alpn", "h2", "-CAfile", TLSFixtures.path("root-ca.pem"), "-verify_return_error",
            "-verify_hostname", "localhost",
        ])
        defer { run.stop() }
        spin(loop, seconds: 20) { !run.process.isRunning && server.first?.isDone == true }
        let output = run.output
        #expect(output.contains("ALPN protocol: h2"), "\(output)")
        #expect(output.contains("Verify return code: 0 (ok)"), "\(output)")
        #expect(server.first?.info?.applicationProtocol == "h2")
        server.close()
    }

    @Test("curl --http2 negotiates h2 with our server")
    func curlAgainstServer() throws {
        try #require(toolExists("curl"))
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let run = try ToolRun([
            "curl", "-v", "--http2", "--max-time", "3", "--cacert", TLSFixtures.path("root-ca.pem"),
            "https://localhost:\(server.port)/",
        ])
        defer { run.stop() }
        // Our test server speaks no HTTP/2, so curl gives up after its max time; the handshake is what counts.
        spin(loop, seconds: 20) { !run.process.isRunning }
        let output = run.output
        #expect(output.contains("ALPN: server accepted h2"), "\(output)")
        #expect(server.first?.info?.applicationProtocol == "h2")
        #expect(server.first?.received.starts(with: Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)) == true)
        server.close()
    }

    @Test(
        "our client against openssl s_server: h2 accepted and data delivered; http/1.1 only is refused",
        arguments: ["h2", "http/1.1"])
    func clientAgainstSServer(alpn: String) throws {
        try #require(toolExists("openssl"))
        let loop = try EventLoop()
        let run = try ToolRun(
            [
                "openssl", "s_server", "-accept", "127.0.0.1:0", "-naccept", "1",
                "-cert", TLSFixtures.path("server.pem"), "-key", TLSFixtures.path("server.key"),
                "-cert_chain", TLSFixtures.path("intermediate-ca.pem"), "-alpn", alpn,
            ],
            keepInputOpen: true)
        defer { run.stop() }
        var port: Int?
        spin(loop, seconds: 10) {
            port = run.output.split(separator: "\n").first { $0.hasPrefix("ACCEPT 127.0.0.1:") }
                .flatMap { Int($0.dropFirst("ACCEPT 127.0.0.1:".count)) }
            return port != nil
        }
        let serverPort = try #require(port, "\(run.output)")
        let recorder = TLSRecorder()
        let client = TLSConnection.connect(
            host: "localhost", port: serverPort, context: try TLSFixtures.clientContext(),
            loop: loop, delegate: recorder)
        client.write(Array("hello from apns-bulk\n".utf8))
        spin(loop) { recorder.isDone }
        if alpn == "h2" {
            #expect(recorder.info?.applicationProtocol == "h2")
            spin(loop) { run.output.contains("hello from apns-bulk") }
            #expect(run.output.contains("hello from apns-bulk"))
            client.close()
        } else {
            #expect(recorder.info == nil)
            // s_server answers a client without any of its protocols with a no_application_protocol alert.
            #expect(recorder.closeError?.kind == .alpnNotH2)
            #expect(recorder.closeError?.detail.contains("no application protocol") == true)
        }
    }
}
