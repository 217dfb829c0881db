import Foundation

/// Turns SIGINT and SIGTERM into a `StopSignal` for as long as it lives (the signals are ignored by the process
/// and heard on a dispatch queue, which raises the stop signal and so wakes the campaign's event loop).
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
