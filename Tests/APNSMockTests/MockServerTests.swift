import APNSCore
import APNSCrypto
import APNSTransport
import Foundation
import Testing

@testable import APNSMock

/// One mock server on 127.0.0.1:0 for one test, with a fresh provider key, a valid `authorization` value, the
/// generated CA in a temporary directory, and helpers that drive it with curl and h2load.
final class MockServerFixture {
    static let topic = "com.example.app"
    static let keyID = "KEYID12345"
    static let teamID = "TEAMID1234"
    static let goodToken = String(repeating: "ab", count: 32)
    static let deadToken = String(repeating: "1", count: 60) + "dead"
    static let badToken = String(repeating: "2", count: 60) + "0bad"
    static let payload = #"{"aps":{"alert":"hi"}}"#

    let server: MockServer
    let signer: ProviderTokenSigner
    let authorization: String
    let directory: URL
    let caFile: String
    let payloadFile: String

    init(
        tls: MockServerTLS = .generated(),
        enforcement: MockServer.InitialLimitEnforcement = .onceAcknowledged,
        configure: (inout MockConfiguration) throws -> Void = { _ in }
    ) throws {
        let key = try ProviderKey.generate()
        signer = try ProviderTokenSigner(key: key, keyID: Self.keyID, teamID: Self.teamID)
        authorization = "bearer " + (try signer.sign(issuedAt: Int64(Date().timeIntervalSince1970)))
        var configuration = MockConfiguration(
            keys: [MockProviderKey(keyID: Self.keyID, teamID: Self.teamID, publicKey: key.publicKey)],
            allowedBundleIDs: [Self.topic]
        )
        try configure(&configuration)
        server = try MockServer.start(configuration: configuration, tls: tls, initialLimitEnforcement: enforcement)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mock-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        caFile = directory.appendingPathComponent("ca.pem").path
        payloadFile = directory.appendingPathComponent("payload.json").path
        try Data((server.caPEM ?? "").utf8).write(to: URL(fileURLWithPath: caFile))
        try Data(Self.payload.utf8).write(to: URL(fileURLWithPath: payloadFile))
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func url(token: String = goodToken) -> String {
        "https://127.0.0.1:\(server.port)/3/device/\(token)"
    }

    /// One curl request: POSTs the payload unless `method` says otherwise.
    func curl(
        token: String = goodToken,
        method: String = "POST",
        headers: [String]? = nil,
        extra: [String] = []
    ) throws -> CurlResult {
        let headerFile = directory.appendingPathComponent("headers-\(UUID().uuidString)").path
        let bodyFile = directory.appendingPathComponent("body-\(UUID().uuidString)").path
        var arguments = [
            "-sS", "--http2", "--cacert", caFile, "--max-time", "10", "-D", headerFile, "-o", bodyFile,
            "-w", "%{http_code}",
        ]
        for header in headers ?? ["authorization: \(authorization)", "apns-topic: \(Self.topic)"] {
            arguments += ["-H", header]
        }
        if method == "POST" { arguments += ["-d", Self.payload] } else { arguments += ["-X", method] }
        arguments += extra
        arguments.append(url(token: token))
        let result = try ToolProcess.run("/usr/bin/curl", arguments)
        return CurlResult(
            exitStatus: result.status,
            status: Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0,
            headers: CurlResult.parseHeaders((try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""),
            body: (try? String(contentsOfFile: bodyFile, encoding: .utf8)) ?? "",
            stderr: result.stderr
        )
    }

    /// An h2load run POSTing the payload with the valid token to `urls` (round robin).
    func h2load(requests: Int, clients: Int, streams: Int, urls: [String]? = nil) throws -> H2LoadResult {
        var arguments = [
            "-n", "\(requests)", "-c", "\(clients)", "-m", "\(streams)",
            "--header=authorization: \(authorization)", "--header=apns-topic: \(Self.topic)",
            "-d", payloadFile,
        ]
        arguments += urls ?? [url()]
        let result = try ToolProcess.run("/usr/bin/h2load", arguments)
        return H2LoadResult(output: result.stdout + result.stderr)
    }
}

/// What one curl run showed.
struct CurlResult {
    let exitStatus: Int32
    /// 0 when no response arrived.
    let status: Int
    let headers: [String: String]
    let body: String
    let stderr: String

    static func parseHeaders(_ text: String) -> [String: String] {
        var headers: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix(":") else { continue }
            let name = line[..<colon].lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }
}

/// The numbers of an h2load run ("requests: N total, ... N succeeded, N failed, N errored" and "status codes").
struct H2LoadResult {
    let output: String
    let numbers: [String: Int]

    init(output: String) {
        self.output = output
        var numbers: [String: Int] = [:]
        for line in output.split(whereSeparator: \.isNewline) {
            let prefix: String
            if line.hasPrefix("requests:") {
                prefix = ""
            } else if line.hasPrefix("status codes:") {
                prefix = "status "
            } else {
                continue
            }
            let list = line[line.index(after: line.firstIndex(of: ":") ?? line.startIndex)...]
            for item in list.split(separator: ",") {
                let parts = item.split(separator: " ")
                guard parts.count >= 2, let value = Int(parts[0]) else { continue }
                numbers[prefix + parts[1]] = value
            }
        }
        self.numbers = numbers
    }

    var succeeded: Int { numbers["succeeded"] ?? -1 }
    var failed: Int { numbers["failed"] ?? -1 }
    var errored: Int { numbers["errored"] ?? -1 }
    func status(_ family: String) -> Int { numbers["status " + family] ?? -1 }
}

/// Runs a tool with its output in files (no pipe can fill up), killed after `timeout` seconds.
enum ToolProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func run(_ executable: String, _ arguments: [String], timeout: Double = 15) throws -> Result {
        let directory = FileManager.default.temporaryDirectory
        let stdoutURL = directory.appendingPathComponent("tool-\(UUID().uuidString).out")
        let stderrURL = directory.appendingPathComponent("tool-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: stdoutURL)
            try? FileManager.default.removeItem(at: stderrURL)
        }
        let stdout = try FileHandle(forWritingTo: stdoutURL)
        let stderr = try FileHandle(forWritingTo: stderrURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = stdout
        process.standardError = stderr
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            exited.wait()
            Issue.record("\(executable) did not finish within \(timeout)s")
        }
        try stdout.close()
        try stderr.close()
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        )
    }
}

@Suite("Mock server lifecycle")
struct MockServerTests {
    @Test("starts on an ephemeral port with a generated CA, and stop closes the port and returns the counters")
    func startAndStop() throws {
        let fixture = try MockServerFixture()
        let server = fixture.server
        #expect(server.port > 0)
        #expect(server.url == "https://127.0.0.1:\(server.port)")
        #expect(server.caPEM?.hasPrefix("-----BEGIN CERTIFICATE-----") == true)
        #expect(server.certificateAuthority != nil)
        let answered = try fixture.curl()
        #expect(answered.status == 200)
        #expect(server.counters().byStatus == [200: 1])

        let final = server.stop()
        #expect(server.isStopped)
        #expect(final.requests == 1)
        #expect(server.stop() == final)  // idempotent
        #expect(server.counters() == final)
        #expect(server.openConnectionCount() == 0)
        let refused = try fixture.curl()
        #expect(refused.status == 0)
        #expect(refused.exitStatus == 7)  // curl: failed to connect
    }

    @Test("a bad configuration or an unusable certificate fails start with a clear error")
    func startFailures() throws {
        let badLimits = MockConfiguration(maxConcurrentStreams: 1, initialConcurrentStreams: 5)
        let configurationError = #expect(throws: MockServerError.self) {
            try MockServer.start(configuration: badLimits)
        }
        #expect(configurationError?.isConfigurationError == true)

        let missing = MockServerTLS.pemFiles(
            certificateChain: "/nonexistent/chain.pem", privateKey: "/nonexistent/key.pem")
        let tlsError = #expect(throws: MockServerError.self) {
            try MockServer.start(configuration: MockConfiguration(), tls: missing)
        }
        #expect(tlsError?.description.contains("TLS") == true)

        let first = try MockServer.start(configuration: MockConfiguration())
        defer { first.stop() }
        let listenError = #expect(throws: MockServerError.self) {
            try MockServer.start(configuration: MockConfiguration(), port: first.port)
        }
        #expect(listenError?.isListenError == true)
    }

    @Test("the first SETTINGS frame is rewritten to the initial limit, entry by entry")
    func rewritesFirstSettings() {
        // SETTINGS (length 12): INITIAL_WINDOW_SIZE = 1 MiB, MAX_CONCURRENT_STREAMS = 1000; then a WINDOW_UPDATE.
        let settings: [UInt8] = [
            0, 0, 12, 0x04, 0, 0, 0, 0, 0, 0x00, 0x04, 0, 0x10, 0, 0, 0x00, 0x03, 0, 0, 0x03, 0xE8,
        ]
        let windowUpdate: [UInt8] = [0, 0, 4, 0x08, 0, 0, 0, 0, 0, 0, 0xFF, 0, 0]
        var output = settings + windowUpdate
        #expect(MockServerConnection.rewriteFirstSettings(&output, maxConcurrentStreams: 1))
        #expect(Array(output[15..<21]) == [0x00, 0x03, 0, 0, 0, 1])
        #expect(Array(output[0..<15]) == Array(settings[0..<15]))
        #expect(Array(output[21...]) == windowUpdate)

        var notSettings = windowUpdate
        #expect(!MockServerConnection.rewriteFirstSettings(&notSettings, maxConcurrentStreams: 1))
        #expect(notSettings == windowUpdate)
        var withoutLimit: [UInt8] = [0, 0, 6, 0x04, 0, 0, 0, 0, 0, 0x00, 0x04, 0, 0x10, 0, 0]
        #expect(!MockServerConnection.rewriteFirstSettings(&withoutLimit, maxConcurrentStreams: 1))
        var truncated = Array(settings[0..<18])
        #expect(!MockServerConnection.rewriteFirstSettings(&truncated, maxConcurrentStreams: 1))
    }
}
