import Foundation
import Testing

/// Paths of the fixtures and samples, temporary directories, and running the `openssl` command line.
enum CryptoTestSupport {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func fixture(_ name: String) -> String {
        packageRoot.appendingPathComponent("Tests/Fixtures/crypto/\(name)").path
    }

    static func sample(_ name: String) -> String {
        packageRoot.appendingPathComponent("samples/keys/\(name)").path
    }

    static func contents(of path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    /// A new empty directory for one test, inside this test process's own folder under the system's temporary
    /// directory (`apns-crypto-tests-<uuid>`), which is removed with everything in it when the process exits.
    static func temporaryDirectory() throws -> URL {
        let url = processDirectory.appendingPathComponent(UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `body` with a new empty directory, removed when `body` returns or throws.
    static func withTemporaryDirectory<Result>(_ body: (URL) throws -> Result) throws -> Result {
        let url = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(url)
    }

    /// The folder of this test process's temporary directories; created on first use, removed at exit.
    private static let processDirectory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apns-crypto-tests-\(UUID().uuidString)")
        atexit { try? FileManager.default.removeItem(at: CryptoTestSupport.processDirectory) }
        return url
    }()

    /// What a finished tool printed and returned.
    struct ProcessOutput {
        let status: Int32
        let stdout: Data
        let stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs `arguments` (the first is looked up in PATH) under `timeout` so a hung tool cannot hang the suite.
    static func run(_ arguments: [String], stdin: Data? = nil, seconds: Int = 60) throws -> ProcessOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["timeout", String(seconds)] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        // The tools used here write little to stderr (far below a pipe's buffer), so it is read after stdout.
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessOutput(
            status: process.terminationStatus, stdout: stdout, stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// `sh -c script`, for the openssl pipelines the documentation gives.
    static func shell(_ script: String) throws -> ProcessOutput {
        try run(["sh", "-c", script])
    }

    /// `'text'` quoted for sh.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
