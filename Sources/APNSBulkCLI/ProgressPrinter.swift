import APNSCore
import APNSPipeline
import Foundation

/// Shows a run's progress on stderr: a live line on a terminal, a plain log line every 10 seconds otherwise
/// (cron, CI), or nothing.
final class ProgressPrinter: @unchecked Sendable {
    // @unchecked: used only from the event-loop thread that runs the campaign.
    enum Mode { case bar, log, none }

    private let mode: Mode
    private var lastLog = 0.0
    private var lastLineLength = 0

    init(option: String) {
        switch option {
        case "bar": mode = .bar
        case "log": mode = .log
        case "none": mode = .none
        default: mode = isatty(STDERR_FILENO) == 1 ? .bar : .log
        }
    }

    func update(_ summary: DispatchSummary, inFlight: Int) {
        let failed = summary.count(.retryable) + summary.count(.inDoubt) + summary.count(.notSent)
        let line = String(
            format: "%d records | %d delivered | %d pruned | %d invalid | %d failed | in flight %d/%d | %.0f req/s | %.0f s",
            summary.records, summary.count(.delivered), summary.count(.prune), summary.count(.inputError), failed,
            inFlight, summary.inFlightWindow, summary.requestRate, summary.elapsedSeconds)
        switch mode {
        case .none:
            return
        case .bar:
            let padding = String(repeating: " ", count: max(0, lastLineLength - line.count))
            FileHandle.standardError.write(Data(("\r" + line + padding).utf8))
            lastLineLength = line.count
        case .log:
            guard summary.elapsedSeconds - lastLog >= 10 else { return }
            lastLog = summary.elapsedSeconds
            FileHandle.standardError.write(Data(("apns-bulk: " + line + "\n").utf8))
        }
    }

    /// Ends the live line before the final summary.
    func finish() {
        if mode == .bar, lastLineLength > 0 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

/// Turns SIGINT and SIGTERM into a `StopSignal` for as long as it lives.
final class SignalWatcher {
    private var sources: [any DispatchSourceSignal] = []

    init(_ stop: StopSignal) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.raise() }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
