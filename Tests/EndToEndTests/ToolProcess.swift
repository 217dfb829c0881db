import Foundation
import Testing

/// Runs the built `apns-bulk` executable (`APNS_BULK_BIN`, or `.build/debug/apns-bulk`) and collects its output.
enum Tool {
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["APNS_BULK_BIN"], !path.isEmpty { return path }
        return packageRoot.appendingPathComponent(".build/debug/apns-bulk").path
    }()

    static func path(_ relative: String) -> String { packageRoot.appendingPathComponent(relative).path }

    /// How many times longer than usual the tests wait for a process (`APNS_BULK_TEST_TIME_SCALE`, default 1):
    /// scripts/test.sh raises it for the sanitizer runs, which slow the executable down many times.
    static let timeScale: Double = {
        guard let text = ProcessInfo.processInfo.environment["APNS_BULK_TEST_TIME_SCALE"], let scale = Double(text),
            scale >= 1
        else { return 1 }
        return scale
    }()

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs the tool (or `program`, e.g. a shell) to completion, in `directory` if given (killed after `timeout` ×
    /// `timeScale` seconds).
    static func run(
        _ arguments: [String], timeout: Double = 120, environment: [String: String] = [:],
        program: String? = nil, directory: String? = nil
    ) throws -> Result {
        let timeout = timeout * timeScale
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program ?? binary)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let directory = try TemporaryDirectory()
        let out = directory.file("stdout")
        let err = directory.file("stderr")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            Issue.record("\(program ?? "apns-bulk") \(arguments.first ?? "") did not finish within \(timeout) s")
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}

/// A directory removed when the value is released.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("apns-bulk-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// An `apns-bulk mock` process on an ephemeral port of 127.0.0.1, with the sample test key.
final class MockProcess: @unchecked Sendable {
    static let keyID = "TEST123456"
    static let teamID = "TEAMID1234"
    static let topic = "com.example.app"
    static let keyFile = Tool.path("samples/keys/AuthKey_TEST123456.p8")
    static let publicKeyFile = Tool.path("samples/keys/AuthKey_TEST123456.pub.pem")

    let process = Process()
    let directory: TemporaryDirectory
    let port: Int
    var caFile: String { directory.file("ca.pem") }
    var countersFile: String { directory.file("counters.json") }

    /// `launcher`: a program and its arguments that run the mock (the executable and its arguments follow them), such
    /// as a shell that makes a network namespace first and then execs it (keeping its pid).
    init(_ extra: [String] = [], publicKey: String = MockProcess.publicKeyFile, launcher: [String] = []) throws {
        directory = try TemporaryDirectory()
        let portFile = directory.file("port")
        process.executableURL = URL(fileURLWithPath: launcher.first ?? Tool.binary)
        process.arguments =
            Array(launcher.dropFirst()) + (launcher.isEmpty ? [] : [Tool.binary]) + [
                "mock", "--listen", "127.0.0.1:0", "--port-file", portFile, "--write-ca", directory.file("ca.pem"),
                "--key-id", Self.keyID, "--team-id", Self.teamID, "--public-key", publicKey, "--topic", Self.topic,
                "--counters", directory.file("counters.json"), "--duration", "300",
            ] + extra
        let log = directory.file("mock.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var found: Int?
        for _ in 0..<Int(300 * Tool.timeScale) {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
                let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                found = value
                break
            }
            usleep(20_000)
        }
        guard let found else {
            process.terminate()
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw MockStartError(log: text)
        }
        port = found
    }

    /// The options that point `send`/`replay` at this mock with the sample key.
    var clientArguments: [String] {
        [
            "--endpoint", "https://127.0.0.1:\(port)", "--ca-file", caFile, "--key", Self.keyFile,
            "--key-id", Self.keyID, "--team-id", Self.teamID, "--topic", Self.topic, "--progress", "none",
        ]
    }

    /// The options for `replay` (no `--topic`: replayed records carry theirs).
    var replayArguments: [String] {
        var arguments = clientArguments
        if let index = arguments.firstIndex(of: "--topic") { arguments.removeSubrange(index...(index + 1)) }
        return arguments
    }

    /// Stops the mock (SIGINT) and returns its counters.
    func stop() throws -> [String: Any] {
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        let deadline = Date().addingTimeInterval(10 * Tool.timeScale)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let data = try Data(contentsOf: URL(fileURLWithPath: countersFile))
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

struct MockStartError: Error, CustomStringConvertible {
    let log: String
    var description: String { "the mock did not start: \(log)" }
}

/// Result lines read back as dictionaries.
enum Results {
    static func read(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw MockStartError(log: "not a JSON object: \(line)")
            }
            return object
        }
    }

    /// The lines a result file holds whole (a `kill -9` may leave a last one torn, without its line end).
    static func completeLines(_ path: String) throws -> Int {
        try Data(contentsOf: URL(fileURLWithPath: path)).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }

    /// outcome by line number, for one input file.
    static func outcomes(_ lines: [[String: Any]]) -> [Int: String] {
        var map: [Int: String] = [:]
        for line in lines {
            if let number = line["line"] as? Int, let outcome = line["outcome"] as? String { map[number] = outcome }
        }
        return map
    }
}
