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

    @Test(
        "at 60, 80 and 120 columns: lines that fit, percent, ETA and rate kept; Ctrl-C or the end clears them",
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
        let leftOver = end.screen.filter {
            $0.contains("[#") || $0.contains("[..") || $0.contains("ETA ") || $0.contains("req/s ")
                || $0.contains("(limit ")
        }
        #expect(leftOver.isEmpty, "the live display was left on screen: \(leftOver)")
    }

    @Test(
        "a resize from 120 to 60 columns: the next redraw fits the new width",
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

    @Test(
        "--rate 5 over 20 records: the percent follows the records answered, never 100 % before the end; the ETA is what is left over the rate",
        .enabled(if: Tmux.available, "tmux is not installed (scripts/test.sh installs it)"))
    func progressFollowsAnswers() throws {
        let (records, rate) = (20, 5.0)
        let run = try TerminalRun(width: 120, records: records, rate: "5", dead: "0", mockFaults: [])
        var samples: [(percent: Double, answered: Int, eta: Double?)] = []
        var exited = false
        let deadline = Date().addingTimeInterval(60 * Tool.timeScale)
        while Date() < deadline, !exited {
            let screen = run.tmux.screen()
            exited = screen.contains { $0.hasPrefix("EXIT ") }
            if !exited, let sample = Self.progress(on: screen) { samples.append(sample) }
            usleep(50_000)
        }
        #expect(exited, "send did not end")
        let during = samples.filter { $0.answered < records }
        #expect(during.count >= 3, "too few live displays: \(samples)")
        for sample in samples {
            let answered = 100 * Double(sample.answered) / Double(records)
            // Both lines come from one snapshot: the percent is the records answered, rounded down.
            #expect(
                sample.percent <= answered + 0.1 && sample.percent >= answered - 5.1,
                "\(sample.percent) % shown with \(sample.answered) of \(records) answered")
            #expect(
                sample.percent < 100 || sample.answered == records,
                "100 % shown with \(sample.answered) of \(records) answered")
        }
        for sample in during where sample.answered >= 2 {
            let expected = Double(records - sample.answered) / rate
            let eta = try #require(sample.eta, "no ETA with \(sample.answered) answered")
            #expect(
                eta >= expected - 1.5 && eta <= (expected + 2) * 2 * Tool.timeScale,
                "ETA \(eta) s with \(records - sample.answered) records left at --rate \(rate)")
        }
    }

    /// The percent, the records answered (delivered: the mock answers every one 200) and the ETA in seconds (nil
    /// for `--`) of a screen that shows the live display.
    static func progress(on screen: [String]) -> (percent: Double, answered: Int, eta: Double?)? {
        guard let first = screen.first(where: { $0.contains("req/s") }),
            let counts = screen.first(where: { $0.contains(" records: ") }),
            let percent = first.firstMatch(of: /([0-9]+\.[0-9])%/).flatMap({ Double($0.1) }),
            let answered = counts.firstMatch(of: /: ([0-9,]+) delivered/).flatMap({ Int($0.1.replacing(",", with: "")) }
            ),
            let eta = first.firstMatch(of: /ETA ([0-9a-z-]+)/)?.1
        else { return nil }
        return (percent, answered, seconds(String(eta)))
    }

    /// `4s`, `1m02s` in seconds; nil for `--`.
    static func seconds(_ text: String) -> Double? {
        guard let match = text.wholeMatch(of: /(?:([0-9]+)m)?([0-9]+)s/) else { return nil }
        return Double(match.1.flatMap { Int($0) } ?? 0) * 60 + Double(Int(match.2) ?? 0)
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

    /// `records` at `--rate rate` (by default 12,000 at 2,000 a second, 1 % dead tokens, 1 % answered 500).
    init(
        width: Int, records: Int = 12000, rate: String = "2000", dead: String = "0.01",
        mockFaults: [String] = ["--fault", "latency=20..40ms", "--fault", "500=0.01"]
    ) throws {
        directory = try TemporaryDirectory()
        let campaign = directory.file("c.ndjson")
        try SendEndToEndTests.shell(
            "python3 '\(Tool.path("scripts/gen-campaign.py"))' --records \(records) --dead \(dead) --out '\(campaign)'")
        mock = try MockProcess(mockFaults)
        var arguments =
            ["send", campaign, "--results", directory.file("r.ndjson"), "--rate", rate] + mock.clientArguments
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
                !screen.contains(where: { $0.hasPrefix("EXIT ") })
            {
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
        let status = run(
            ["new-session", "-d", "-s", "t", "-x", "\(width)", "-y", "\(height)", "bash -c " + Self.quoted(command)],
            closingInheritedFiles: true
        ).status
        guard status == 0 else { throw MockStartError(log: "tmux new-session failed with \(status)") }
    }

    /// The visible screen, one string per row (tmux leaves out trailing blanks).
    func screen() -> [String] {
        run(["capture-pane", "-p", "-t", "t"]).output.split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
    }

    func sendKeys(_ keys: String) { run(["send-keys", "-t", "t", keys]) }

    func resize(width: Int) { run(["resize-window", "-t", "t", "-x", "\(width)"]) }

    /// Runs tmux against this server; its standard output is read whole before waiting (a full pipe would block it).
    /// The command that starts the server runs under python3's `subprocess`, which closes every inherited file
    /// but the standard three: Foundation's `Process` learns that a child ended when a descriptor it shares
    /// with the child closes, and the tmux server, forked off to live on, would otherwise hold it open forever.
    /// It also unblocks every signal: the test runner's threads block most of them, a mask children inherit, and
    /// a pane whose shell cannot get SIGHUP outlives `kill-server` (and the server with it).
    @discardableResult
    private func run(_ arguments: [String], closingInheritedFiles: Bool = false) -> (status: Int32, output: String) {
        guard let binary = Self.binary else { return (-1, "") }
        let process = Process()
        let pipe = Pipe()
        let tmux = [binary, "-L", socket, "-f", "/dev/null"] + arguments
        if closingInheritedFiles {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments =
                [
                    "-c",
                    "import signal, subprocess, sys; signal.pthread_sigmask(signal.SIG_SETMASK, set()); "
                        + "sys.exit(subprocess.call(sys.argv[1:], close_fds=True))",
                ] + tmux
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
