import APNSCore
import APNSPipeline
import Foundation

/// Shows a run's progress on stderr: a live display on a terminal (fitted to its width at every redraw, so it
/// follows a resize, and erased when the run ends however it ends), a timestamped log line or one JSON object per
/// line every 10 seconds otherwise (cron, CI, log pipelines), or nothing. What the lines say is `ProgressSnapshot`'s.
final class ProgressPrinter: @unchecked Sendable {
    // @unchecked: used only from the event-loop thread that runs the campaign.
    enum Mode { case bar, log, json, none }

    /// Seconds between two log or JSON lines.
    static let logInterval = 10.0

    private let mode: Mode
    private var lastLog = 0.0
    /// Lines of the live display on screen now (redrawn in place, erased at the end).
    private var drawnLines = 0
    private var last: ProgressSnapshot?
    /// `--rate`, which bounds the time left.
    private let rateLimit: Double?

    init(option: String, rateLimit: Double? = nil) {
        self.rateLimit = rateLimit
        switch option {
        case "bar": mode = .bar
        case "log": mode = .log
        case "json": mode = .json
        case "none": mode = .none
        default: mode = isatty(STDERR_FILENO) == 1 ? .bar : .log
        }
    }

    /// `window`: the in-flight limit, when the dispatcher has one.
    func update(_ summary: CampaignSummary, inFlight: Int, window: Int? = nil) {
        let snapshot = ProgressSnapshot(summary, inFlight: inFlight, window: window, rateLimit: rateLimit)
        last = snapshot
        switch mode {
        case .none:
            return
        case .bar:
            // Back to the display's first line; auto-wrap off while drawing (a line never reaches the last column,
            // but a terminal narrowed between two redraws must clip, not scroll); each line cleared to its end.
            let lines = snapshot.terminalLines(width: Self.terminalColumns() - 1)
            write(
                Self.backToTop(drawnLines) + "\u{1B}[?7l" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n")
                    + "\u{1B}[?7h")
            drawnLines = lines.count
        case .log, .json:
            guard snapshot.elapsedSeconds - lastLog >= Self.logInterval else { return }
            lastLog = snapshot.elapsedSeconds
            let now = Date().timeIntervalSince1970
            write((mode == .json ? snapshot.jsonLine(at: now) : snapshot.logLine(at: now)) + "\n")
        }
    }

    /// Ends the live display before the final summary or an error: the live lines are erased (the summary says
    /// it all); `json` ends with a last object for the finished run. Safe to call more than once.
    func endLiveDisplay() {
        switch mode {
        case .bar:
            if drawnLines > 0 { write(Self.backToTop(drawnLines) + "\u{1B}[J") }
            drawnLines = 0
        case .json:
            if let last, last.elapsedSeconds != lastLog {
                write(last.jsonLine(at: Date().timeIntervalSince1970) + "\n")
            }
            lastLog = last?.elapsedSeconds ?? lastLog
        case .log, .none: break
        }
    }

    /// The cursor to the start of the first of `lines` drawn lines (it sits on the last).
    private static func backToTop(_ lines: Int) -> String {
        "\r" + (lines > 1 ? "\u{1B}[\(lines - 1)A" : "")
    }

    /// The terminal's width now (stderr's), 80 when it cannot tell; at least 20.
    private static func terminalColumns() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return max(20, Int(size.ws_col))
    }

    private func write(_ text: String) {
        StandardStream.error(text)
    }
}
