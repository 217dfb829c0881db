import Foundation
import Testing

/// `send`'s live display in a real terminal: tmux at 60, 80 and 120 columns, read back off the screen with
/// `capture-pane`, as a person would see it. The lines fit the width without cutting a word, follow a resize,
/// count each result kind apart, and are gone from the screen when the run ends, by itself or by Ctrl-C.
@Suite("the live display in a terminal (tmux)", .serialized)
struct TerminalEndToEndTests {
    /// The words a live line may end with: each part ends in one, so a line that ends otherwise was cut.
    static let lineEndings: Set<String> = [
        "elapsed", "req/s", "delivered", "pruned", "rejected", "invalid", "retryable", "doubt", "sent", "retry",
        "flight", "read",
    ]

    @Test("at 60, 80 and 120 columns: lines that fit, percent, ETA and rate kept; Ctrl-C or the end clears them",
          .enabled(if: Tmux.available, "tmux is not installed (scripts/test.sh installs it)"),
          arguments: [(60, true), (80, false), (120, true)])
    func liveDisplay(width: Int, interrupt: Bool) throws {
        let run = try TerminalRun(width: width)
        let live = try run.waitForLiveDisplay()
        Self.expectFits(live, width: width)
        let first = try #require(live.first { $0.contains("req/s") }, "no first live line: \(live)")
        #expect(first.contains("%") && first.contains("ETA "), "percent and ETA dropped at \(width): \(first)")
        #expect(first.contains("[#") || first.contains("[."), "at \(width) columns the bar fits: \(first)")
        if width >= 120 { #expect(first.contains("elapsed"), "\(first)") }
        let counts = try #require(live.first { $0.contains(" records: ") }, "no counts line: \(live)")
        #expect(counts.contains(" delivered"), "\(counts)")
        #expect(!counts.contains("failed"), "in doubt, retryable and rejected are counted apart: \(counts)")
        if width >= 120 { #expect(counts.contains(" in flight (limit "), "\(counts)") }

        if interrupt { run.tmux.sendKeys("C-c") }
        let end = try run.waitForExit()
        #expect(end.status == (interrupt ? 5 : 0), "exit \(end.status): \(end.screen.joined(separator: "\n"))")
        #expect(end.screen.contains { $0.hasPrefix(interrupt ? "interrupted: " : "finished: ") }, "\(end.screen)")
        let leftOver = end.screen.filter { $0.contains("[#") || $0.contains("[..") || $0.contains("ETA ") || $0.contains("req/s ") || $0.contains("(limit ") }
        #expect(leftOver.isEmpty, "the live display was left on screen: \(leftOver)")
    }

    @Test("a resize from 120 to 60 columns: the next redraw fits the new width",
          .enabled(if: Tmux.available, "tmux is not installed (scripts/test.sh installs it)"))
    func followsResize() throws {
        let run = try TerminalRun(width: 120)
        let wide = try run.waitForLiveDisplay()
        #expect(wide.contains { $0.count > 60 }, "at 120 columns the lines use the room: \(wide)")
        run.tmux.resize(width: 60)
        let narrow = try run.waitForLiveDisplay(atMost: 60)
        Self.expectFits(narrow, width: 60)
        run.tmux.sendKeys("C-c")
        let end = try run.waitForExit()
        #expect(end.status == 5, "exit \(end.status): \(end.screen)")
    }

    /// Every live line shorter than the terminal (the last column stays free) and ending in a whole part.
    static func expectFits(_ lines: [String], width: Int) {
        for line in lines where line.contains("req/s") || line.contains(" records: ") {
            #expect(line.count < width, "\(line.count) columns at \(width): \(line)")
            let last = line.split(separator: " ").last.map(String.init) ?? ""
            #expect(lineEndings.contains(last) || last.hasSuffix(")"), "a cut line at \(width) columns: \(line)")
        }
    }
}

/// A `send` of a slow campaign (rate-limited, the mock answering after 20 to 40 ms) in its own tmux server.
struct TerminalRun {
    let directory: TemporaryDirectory
    let mock: MockProcess
    let tmux: Tmux

    init(width: Int) throws {
        directory = try TemporaryDirectory()
        let campaign = directory.file("c.ndjson")
        try SendEndToEndTests.shell("python3 '\(Tool.path("scripts/gen-campaign.py"))' --records 12000 --dead 0.01 --out '\(campaign)'")
        mock = try MockProcess(["--fault", "latency=20..40ms", "--fault", "500=0.01"])
        var arguments = ["send", campaign, "--results", directory.file("r.ndjson"), "--rate", "2000"] + mock.clientArguments
        if let index = arguments.firstIndex(of: "--progress") { arguments.removeSubrange(index...(index + 1)) }
        let command = ([Tool.binary] + arguments).map(Tmux.quoted).joined(separator: " ")
        tmux = try Tmux(width: width, height: 20, command: "\(command); echo \"EXIT $?\"; sleep 600")
    }

    /// The screen once the live display shows both lines, each at most `atMost` columns when given.
    func waitForLiveDisplay(atMost: Int? = nil) throws -> [String] {
        let deadline = Date().addingTimeInterval(30 * Tool.timeScale)
        var screen: [String] = []
        while Date() < deadline {
            screen = tmux.screen()
            let live = screen.filter { $0.contains("req/s") || $0.contains(" records: ") }
            if live.count == 2, live[1].contains(" delivered"), live.allSatisfy({ $0.count < (atMost ?? .max) }),
               !screen.contains(where: { $0.hasPrefix("EXIT ") }) {
                return screen
            }
            usleep(100_000)
        }
        throw MockStartError(log: "no live display within the time: \(screen.joined(separator: "\n"))")
    }

    /// The screen and exit status once `send` has ended.
    func waitForExit() throws -> (status: Int, screen: [String]) {
        let deadline = Date().addingTimeInterval(60 * Tool.timeScale)
        var screen: [String] = []
        while Date() < deadline {
            screen = tmux.screen()
            if let line = screen.first(where: { $0.hasPrefix("EXIT ") }), let status = Int(line.dropFirst(5)) {
                return (status, screen)
            }
            usleep(100_000)
        }
        throw MockStartError(log: "send did not end within the time: \(screen.joined(separator: "\n"))")
    }
}

/// One tmux server of its own (`-L`), with one window running a command, removed when the value is released.
final class Tmux: @unchecked Sendable {
    static let binary = ["/usr/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var available: Bool { binary != nil }

    let socket = "apns-bulk-test-\(UUID().uuidString.prefix(8))"

    init(width: Int, height: Int, command: String) throws {
        let status = run(["new-session", "-d", "-s", "t", "-x", "\(width)", "-y", "\(height)", "bash -c " + Self.quoted(command)],
                         closingInheritedFiles: true).status
        guard status == 0 else { throw MockStartError(log: "tmux new-session failed with \(status)") }
    }

    /// The visible screen, one string per row (tmux leaves out trailing blanks).
    func screen() -> [String] {
        run(["capture-pane", "-p", "-t", "t"]).output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    func sendKeys(_ keys: String) { run(["send-keys", "-t", "t", keys]) }

    func resize(width: Int) { run(["resize-window", "-t", "t", "-x", "\(width)"]) }

    /// Runs tmux against this server; its standard output is read whole before waiting (a full pipe would block it).
    /// The command that starts the server runs under python3's `subprocess`, which closes every inherited file
    /// but the standard three: Foundation's `Process` learns that a child ended when a descriptor it shares
    /// with the child closes, and the tmux server, forked off to live on, would otherwise hold it open forever.
    @discardableResult
    private func run(_ arguments: [String], closingInheritedFiles: Bool = false) -> (status: Int32, output: String) {
        guard let binary = Self.binary else { return (-1, "") }
        let process = Process()
        let pipe = Pipe()
        let tmux = [binary, "-L", socket, "-f", "/dev/null"] + arguments
        if closingInheritedFiles {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:], close_fds=True))"] + tmux
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = Array(tmux.dropFirst())
        }
        process.environment = ["PATH": "/usr/bin:/bin", "TERM": "xterm-256color", "HOME": NSTemporaryDirectory()]
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return (-1, "") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// `text` as one word for a POSIX shell.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    deinit { _ = run(["kill-server"]) }
}
