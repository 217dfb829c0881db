import APNSPipeline
import Foundation

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
