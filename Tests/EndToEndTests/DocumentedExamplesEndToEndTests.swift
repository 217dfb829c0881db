import Foundation
import Testing

/// Every command the documentation shows (the README's and docs/*.md's shell blocks, every `--help` EXAMPLES) run
/// as a user copies it: in a folder holding the files it names, the mock standing in for APNs, the credentials in
/// the environment (what `export APNS_…` in the examples sets), nothing in the command changed but its `…`
/// placeholders, which the environment fills. Each must do what it says: exit 0 and write what it names.
@Suite("documented examples end to end", .serialized)
struct DocumentedExamplesEndToEndTests {
    /// The examples' own key and team ids, accepted by the mock beside the tests' usual ones.
    static let keyID = "ABC123DEFG"
    static let teamID = "DEF123GHIJ"

    @Test("README.md, docs/*.md and every --help EXAMPLES: each command runs against the mock and exits 0")
    func everyExampleRuns() throws {
        let examples = try Self.documentedExamples()
        #expect(examples.count >= 25, "\(examples.count) examples found: the extraction lost some")
        for source in [
            "README.md", "docs/RUNNING.md", "docs/MOCK.md", "send --help", "replay --help", "prune --help",
            "report --help", "validate --help", "token --help", "pin --help", "mock --help",
        ] {
            #expect(examples.contains { $0.source == source }, "no example read from \(source)")
        }
        let world = try ExampleWorld()
        var failures: [String] = []
        for example in examples {
            let result = try world.run(example)
            if let problem = result { failures.append("\(example.source): \(example.command)\n  \(problem)") }
        }
        #expect(failures.isEmpty, Comment(rawValue: failures.joined(separator: "\n")))
        _ = try world.mock.stop()
    }

    @Test("the extraction reads shell blocks and EXAMPLES, joins continued lines and skips output and prose")
    func extraction() {
        let markdown = """
            Some prose with `apns-bulk send inline` that is not a block.
            ```sh
            export A=1 \\
              B=2
            apns-bulk send c.ndjson \\
              --results r.ndjson   # a comment
            $ apns-bulk report r.ndjson
            apns-bulk: what to do: this is output
            ```
            ```
            not a shell command
            ```
            """
        let found = Self.commands(inMarkdown: markdown)
        #expect(
            found == ["export A=1 B=2", "apns-bulk send c.ndjson --results r.ndjson", "apns-bulk report r.ndjson"],
            "\(found)")
        let help = "OVERVIEW\n\nEXAMPLES\n  apns-bulk pin a.pem \\\n    b.pem\n  curl ... x\n\nEXIT STATUS\n  0 ok"
        #expect(Self.commands(inHelp: help) == ["apns-bulk pin a.pem b.pem", "curl ... x"])
    }

    // MARK: Reading the documents

    struct Example {
        let source: String
        /// The `export …` lines before it in the same block, run first in the same shell.
        let exports: [String]
        let command: String
    }

    /// What follows `apns-bulk` in a command (a tree of files that starts with the word is not one).
    static let subcommands: Set<String> = [
        "send", "replay", "validate", "prune", "report", "token", "pin", "mock", "help", "--help", "--version",
    ]

    static func documentedExamples() throws -> [Example] {
        var examples: [Example] = []
        var documents = ["README.md"]
        let docs = try FileManager.default.contentsOfDirectory(atPath: Tool.path("docs")).filter { $0.hasSuffix(".md") }
        documents += docs.sorted().map { "docs/" + $0 }
        for document in documents {
            let text = try String(contentsOfFile: Tool.path(document), encoding: .utf8)
            examples += grouped(commands(inMarkdown: text), source: document)
        }
        for command in ["send", "replay", "validate", "prune", "report", "token", "pin", "mock"] {
            let help = try Tool.run([command, "--help"], environment: ["COLUMNS": "200"])
            examples += grouped(commands(inHelp: help.stdout), source: "\(command) --help")
        }
        return examples
    }

    /// Commands with the exports that precede them; a command that is not apns-bulk's (curl) or whose arguments
    /// are left to the reader (`...`, `<hex token>`) is not run.
    static func grouped(_ lines: [String], source: String) -> [Example] {
        var exports: [String] = []
        var examples: [Example] = []
        for line in lines {
            if line.hasPrefix("export ") {
                exports.append(line)
            } else if line.hasPrefix("apns-bulk "), !line.contains("..."), !line.contains("<"),
                let name = line.split(separator: " ").dropFirst().first, subcommands.contains(String(name))
            {
                examples.append(Example(source: source, exports: exports, command: line))
            }
        }
        return examples
    }

    /// The shell commands of a Markdown text's fenced blocks that hold commands (`sh`, `bash`, `console` or none):
    /// `apns-bulk …`, `export …` and `curl …` lines, continued lines joined, a trailing `# comment` dropped, a
    /// `$ ` prompt removed; output lines (`apns-bulk: …`) and anything else skipped.
    static func commands(inMarkdown text: String) -> [String] {
        var commands: [String] = []
        var block: [String]?
        var shellBlock = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("```") else {
                block?.append(line)
                continue
            }
            if let lines = block {
                if shellBlock { commands += joined(lines).compactMap(shellCommand) }
                block = nil
            } else {
                shellBlock = ["", "sh", "bash", "console", "shell"].contains(String(line.dropFirst(3)))
                block = []
            }
        }
        return commands
    }

    /// The EXAMPLES lines of a help screen, continued lines joined.
    static func commands(inHelp help: String) -> [String] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "EXAMPLES") else { return [] }
        let examples = lines[(start + 1)...].prefix { !$0.isEmpty }.map { $0.trimmingCharacters(in: .whitespaces) }
        return joined(examples).compactMap(shellCommand)
    }

    /// Shell lines with their continuations (a line ending in a backslash) joined into one.
    private static func joined(_ lines: [String]) -> [String] {
        var logical: [String] = []
        var pending = ""
        for line in lines {
            pending += (pending.isEmpty ? "" : " ") + line
            if pending.hasSuffix("\\") {
                pending.removeLast()
                pending = pending.trimmingCharacters(in: .whitespaces)
                continue
            }
            logical.append(pending)
            pending = ""
        }
        return logical
    }

    private static func shellCommand(_ line: String) -> String? {
        var line = line
        if line.hasPrefix("$ ") { line.removeFirst(2) }
        if let comment = line.range(of: "  #") ?? line.range(of: " # ") { line = String(line[..<comment.lowerBound]) }
        line = line.trimmingCharacters(in: .whitespaces)
        guard line.hasPrefix("apns-bulk ") || line.hasPrefix("export ") || line.hasPrefix("curl ") else { return nil }
        return line
    }
}

/// The folder a user runs the examples in, and the mock that answers for APNs: the files the examples name, and
/// the result files of earlier runs they read (a campaign with retryable records, two shards, a stopped one).
final class ExampleWorld {
    let mock: MockProcess
    let base: TemporaryDirectory
    let environment: [String: String]
    /// The campaign's tokens the mock answers 410 (uninstalled yesterday).
    let deadTokens: [String]

    init() throws {
        let exampleKey = [
            "--key-id", DocumentedExamplesEndToEndTests.keyID, "--team-id", DocumentedExamplesEndToEndTests.teamID,
            "--public-key", MockProcess.publicKeyFile,
        ]
        base = try TemporaryDirectory()
        let fm = FileManager.default
        try fm.copyItem(atPath: MockProcess.keyFile, toPath: base.file("AuthKey_ABC123DEFG.p8"))
        try fm.createDirectory(atPath: base.file("samples"), withIntermediateDirectories: true)
        try fm.copyItem(atPath: Tool.path("samples/keys"), toPath: base.file("samples/keys"))
        try fm.copyItem(atPath: Tool.path("samples/template.json"), toPath: base.file("alert.json"))
        try fm.createDirectory(atPath: base.file("Tests/Fixtures"), withIntermediateDirectories: true)
        try fm.copyItem(atPath: Tool.path("Tests/Fixtures/crypto"), toPath: base.file("Tests/Fixtures/crypto"))
        try fm.copyItem(
            atPath: Tool.path("Tests/Fixtures/crypto/AuthKey_SECOND0001.p8"), toPath: base.file("AuthKey_XYZ987WVUT.p8")
        )
        var campaign = ""
        var users = "token,first_name,points,city\n"
        var export = "\u{FEFF}device_token;first_name;points;city\r\n"  // as a spreadsheet in much of Europe writes it
        var registry = ""
        var dead: [String] = []
        var generator = SystemRandomNumberGenerator()
        func token() -> String {
            (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        }
        let yesterday = Int64(Date().timeIntervalSince1970 * 1000) - 86_400_000
        for index in 0..<40 {
            let hex = token()
            // Six dead tokens, uninstalled yesterday (APNs's 410 timestamp), for the prune examples.
            if index < 6 {
                registry += "unregistered \(hex) \(yesterday)\n"
                dead.append(hex)
            }
            campaign += #"{"token":"\#(hex)","payload":{"aps":{"alert":"Spring sale \#(index)"}}}"# + "\n"
        }
        for index in 0..<5 {
            users += "\(token()),Ana \(index),\(100 + index),\"Lisbon, Portugal\"\n"
            export += "\(token());Bo \(index);\(50 + index);\"Taipei; Taiwan\"\r\n"
        }
        try Data(campaign.utf8).write(to: URL(fileURLWithPath: base.file("campaign.ndjson")))
        // Two apps' records in one file, for the several-keys examples: the second app's carry their topic.
        var twoApps = ""
        for index in 0..<10 {
            let topic = index % 2 == 0 ? "" : #","topic":"com.example.second""#
            twoApps += #"{"token":"\#(token())"\#(topic),"payload":{"aps":{"alert":"Two apps \#(index)"}}}"# + "\n"
        }
        for name in ["spring.ndjson", "two-apps.ndjson"] {
            try Data(twoApps.utf8).write(to: URL(fileURLWithPath: base.file(name)))
        }
        try Data(users.utf8).write(to: URL(fileURLWithPath: base.file("users.csv")))
        try Data(export.utf8).write(to: URL(fileURLWithPath: base.file("export.csv")))
        let registryFile = base.file("registry.txt")
        try Data(registry.utf8).write(to: URL(fileURLWithPath: registryFile))
        deadTokens = dead
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/sh")
        gzip.arguments = ["-c", "gzip -c campaign.ndjson > big.ndjson.gz"]
        gzip.currentDirectoryURL = URL(fileURLWithPath: base.path)
        try gzip.run()
        gzip.waitUntilExit()

        // Beside the tests' key (MockProcess's own), one --team-id per --key-id; the topic is the one of the docs.
        // The second app's key of the several-keys examples (another team), and its topic.
        let secondKey = [
            "--key-id", "XYZ987WVUT", "--team-id", "TEAM000002", "--public-key",
            Tool.path("Tests/Fixtures/crypto/AuthKey_SECOND0001.pub.pem"), "--topic", "com.example.second",
        ]
        mock = try MockProcess(exampleKey + secondKey + ["--registry", registryFile])
        try fm.copyItem(atPath: mock.caFile, toPath: base.file("mock-ca.pem"))
        for name in ["server-chain.pem", "ca.pem", "backup-ca.pem", "gateway-ca.pem"] {
            try fm.copyItem(atPath: mock.caFile, toPath: base.file(name))
        }
        try Data("a-test-password\n".utf8).write(to: URL(fileURLWithPath: base.file("gateway-password")))
        environment = [
            "APNS_ENDPOINT": "https://127.0.0.1:\(mock.port)", "APNS_CA_FILE": base.file("mock-ca.pem"),
            "APNS_KEY_FILE": base.file("AuthKey_ABC123DEFG.p8"), "APNS_KEY_ID": DocumentedExamplesEndToEndTests.keyID,
            "APNS_TEAM_ID": DocumentedExamplesEndToEndTests.teamID, "APNS_TOPIC": "com.example.app",
            "JOB_COMPLETION_INDEX": "0", "APNS_PROGRESS": "none",
        ]
        // Earlier runs the examples read: yesterday's campaign against a flaky APNs (some records retryable),
        // two shards of one, and a campaign stopped by a topic the app does not have.
        let flaky = try MockProcess(exampleKey + ["--registry", registryFile, "--fault", "503=0.3", "--seed", "7"])
        var flakyEnvironment = environment
        flakyEnvironment["APNS_ENDPOINT"] = "https://127.0.0.1:\(flaky.port)"
        flakyEnvironment["APNS_CA_FILE"] = flaky.caFile
        for (results, extra) in [
            ("results.ndjson", ["--summary", "summary.json"]), ("yesterday.ndjson", []),
            ("results-0.ndjson", ["--shard", "0/2", "--summary", "summary-0.json"]),
            ("results-1.ndjson", ["--shard", "1/2", "--summary", "summary-1.json"]),
        ] {
            let run = try shell(
                "apns-bulk send campaign.ndjson --results \(results) --max-attempts 1 " + extra.joined(separator: " "),
                in: base.path, environment: flakyEnvironment)
            guard run.status == 3 else {
                throw MockStartError(log: "setting up \(results): exit \(run.status): \(run.stderr)")
            }
        }
        _ = try flaky.stop()
        let late = try shell(
            "apns-bulk send campaign.ndjson --results late.ndjson --rate 10 --not-after 1s",
            in: base.path, environment: environment)
        guard late.status == 6 else {
            throw MockStartError(log: "setting up late.ndjson: exit \(late.status): \(late.stderr)")
        }
        let stopped = try shell(
            "apns-bulk send campaign.ndjson --results stopped.ndjson --topic com.example.other",
            in: base.path, environment: environment)
        guard stopped.status == 4 else {
            throw MockStartError(log: "setting up stopped.ndjson: exit \(stopped.status): \(stopped.stderr)")
        }
    }

    /// Runs one example in a copy of the folder (so no example sees another's output); nil when it did what it
    /// says, else what went wrong.
    func run(_ example: DocumentedExamplesEndToEndTests.Example) throws -> String? {
        let folder = try TemporaryDirectory()
        let fm = FileManager.default
        for name in try fm.contentsOfDirectory(atPath: base.path) {
            try fm.copyItem(atPath: base.file(name), toPath: folder.file(name))
        }
        // The files the example writes are its own: an output of the set-up of the same name is removed first.
        let words = example.command.split(separator: " ").map(String.init)
        for (index, word) in words.enumerated()
        where ["--results", "--output", "--html", "--json", "--report", ">"].contains(word) {
            guard index + 1 < words.count, !example.command.contains("--resume") else { continue }
            let name = words[index + 1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
            for path in [name, name + ".campaign"] where fm.fileExists(atPath: folder.file(path)) {
                try fm.removeItem(atPath: folder.file(path))
            }
        }
        let command = example.command.replacingOccurrences(of: " --key … --key-id … --team-id …", with: "")
        if command.hasPrefix("apns-bulk mock ") { return try runMock(command, in: folder) }
        let script = (example.exports + [command]).joined(separator: "\n")
        let run = try shell(script, in: folder.path, environment: environment)
        guard run.status == 0 else { return "exit \(run.status): \(run.stderr.suffix(600))" }
        for (index, word) in words.enumerated()
        where ["--results", "--output", "--html", "--json", ">"].contains(word) && index + 1 < words.count {
            let name = words[index + 1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
                .replacingOccurrences(of: "$JOB_COMPLETION_INDEX", with: "0")
            guard name != "-" else { continue }
            guard let size = (try? fm.attributesOfItem(atPath: folder.file(name)))?[.size] as? Int, size > 0 else {
                return "exit 0, but \(name) is missing or empty"
            }
            if words.dropFirst().first == "prune",
                let text = try? String(contentsOfFile: folder.file(name), encoding: .utf8),
                !deadTokens.contains(where: text.contains)
            {
                return "exit 0, but \(name) lists none of the campaign's dead tokens: \(text.prefix(300))"
            }
        }
        return nil
    }

    /// A mock example: it must start and listen (the port its `--port-file` names, or its own message), then stop
    /// cleanly on SIGINT. A fixed `--listen` port is replaced by port 0 (tests use ephemeral ports).
    private func runMock(_ command: String, in folder: TemporaryDirectory) throws -> String? {
        var command = command.replacingOccurrences(of: "127.0.0.1:2197", with: "127.0.0.1:0")
        if !command.contains("--listen") { command += " --listen 127.0.0.1:0" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec " + command]
        process.currentDirectoryURL = URL(fileURLWithPath: folder.path)
        process.environment = shellEnvironment(environment)
        let log = folder.file("mock-example.log")
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var listening = false
        for _ in 0..<Int(200 * Tool.timeScale) {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.contains("listening on") {
                listening = true
                break
            }
            if !process.isRunning { break }
            usleep(25_000)
        }
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard listening else { return "never listened: \(text.suffix(400))" }
        guard process.terminationStatus == 0 else {
            return "exit \(process.terminationStatus) on SIGINT: \(text.suffix(400))"
        }
        return nil
    }

    private func shellEnvironment(_ extra: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = (Tool.binary as NSString).deletingLastPathComponent + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        for (key, value) in extra { env[key] = value }
        return env
    }

    private func shell(_ script: String, in directory: String, environment: [String: String]) throws -> (
        status: Int32, stderr: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "set -e\n" + script]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = shellEnvironment(environment)
        let errors = (directory as NSString).appendingPathComponent(".stderr-\(UInt32.random(in: 0...UInt32.max))")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(120 * Tool.timeScale)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: errors)
        return (process.terminationStatus, text)
    }
}
