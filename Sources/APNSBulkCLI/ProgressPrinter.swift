import APNSCore
import APNSPipeline
import Foundation

/// Shows a run's progress on stderr: a live display on a terminal, a plain log line or one JSON object per line
/// every 10 seconds otherwise (cron, CI, log pipelines), or nothing. What the lines say is `ProgressSnapshot`'s.
final class ProgressPrinter: @unchecked Sendable {
    // @unchecked: used only from the event-loop thread that runs the campaign.
    enum Mode { case bar, log, json, none }

    /// Seconds between two log or JSON lines.
    static let logInterval = 10.0

    private let mode: Mode
    private var lastLog = 0.0
    /// Lines of the live display drawn so far (redrawn in place).
    private var drawnLines = 0
    private var last: ProgressSnapshot?

    init(option: String) {
        switch option {
        case "bar": mode = .bar
        case "log": mode = .log
        case "json": mode = .json
        case "none": mode = .none
        default: mode = isatty(STDERR_FILENO) == 1 ? .bar : .log
        }
    }

    /// `window`: the in-flight window, when the dispatcher has one.
    func update(_ summary: CampaignSummary, inFlight: Int, window: Int? = nil) {
        let snapshot = ProgressSnapshot(summary, inFlight: inFlight, window: window)
        last = snapshot
        switch mode {
        case .none:
            return
        case .bar:
            // Back to the display's first line, auto-wrap off while drawing (a narrow terminal clips the lines
            // instead of scrolling), each line cleared to its end.
            let lines = snapshot.terminalLines
            let up = drawnLines > 1 ? "\u{1B}[\(drawnLines - 1)A" : ""
            write("\r" + up + "\u{1B}[?7l" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\n") + "\u{1B}[?7h")
            drawnLines = lines.count
        case .log, .json:
            guard snapshot.elapsedSeconds - lastLog >= Self.logInterval else { return }
            lastLog = snapshot.elapsedSeconds
            write((mode == .json ? snapshot.jsonLine : snapshot.logLine) + "\n")
        }
    }

    /// Ends the live line before the final summary; `json` ends with a last object for the finished run.
    func endLiveDisplay() {
        switch mode {
        case .bar: if drawnLines > 0 { write("\n") }
        case .json: if let last, last.elapsedSeconds != lastLog { write(last.jsonLine + "\n") }
        case .log, .none: break
        }
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
