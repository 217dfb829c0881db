import APNSCore
import APNSPipeline
import APNSTransport
import Foundation
import Synchronization

/// A run's pushes to a Pushgateway (`--pushgateway`, docs/RUNNING.md "Pushing to a Pushgateway"): with
/// `--pushgateway-interval`, one push at most every interval while the run goes on, and the last one when it ends.
/// Every push runs on one serial queue off the event loop's thread (so they reach the gateway in order and never
/// slow the campaign); the end of the run waits for its push at most `timeout` (twice that behind a push still
/// under way). A push that fails is one warning line on stderr (one per streak of failures during the run) and
/// changes nothing else: not the exit status, not the files.
final class MetricsPusher: Sendable {
    /// How long one push may take, from connecting to the gateway's answer.
    static let timeout = 5.0

    let target: PushgatewayPush
    let campaign: String
    let shard: String
    /// Seconds between pushes during the run; nil: only at the end.
    let interval: Double?
    private let timeout: Double
    private let queue = DispatchQueue(label: "apns-bulk.pushgateway")
    /// The TLS context for an `https://` gateway, built once (nil for `http://`), or why it could not be.
    private let tls: Result<TLSClientContext?, TransportError>
    private let state = Mutex(State())

    private struct State {
        /// When the last push during the run was handed to the queue (loop clock, seconds).
        var lastStart: Double?
        /// A push is queued or running.
        var busy = false
        /// The last push during the run failed (its warning is printed; the next failures are not).
        var failing = false
    }

    init(
        target: PushgatewayPush, campaign: String, shard: String, interval: Double?,
        timeout: Double = MetricsPusher.timeout
    ) {
        self.target = target
        self.campaign = campaign
        self.shard = shard
        self.interval = interval
        self.timeout = timeout
        if target.usesTLS {
            var configuration = TLSClientConfiguration(
                trustRoots: target.trustedCAFile.map { .pemFile(path: $0) } ?? .system)
            configuration.handshake.applicationProtocols = ["http/1.1"]
            configuration.handshake.timeout = timeout
            configuration.connectTimeout = timeout
            tls = Result { () throws(TransportError) in try TLSClientContext(configuration) }.map { Optional($0) }
        } else {
            tls = .success(nil)
        }
    }

    /// During the run (on the loop's thread, from the progress callback): hands a push of `body()` to the queue
    /// when the interval has passed since the last one and none is under way. `body` is only rendered then.
    func pushDuringRun(now: Double, body: () -> String) {
        guard let interval else { return }
        let due = state.withLock { state -> Bool in
            guard !state.busy, state.lastStart.map({ now - $0 >= interval }) ?? true else { return false }
            state.busy = true
            state.lastStart = now
            return true
        }
        guard due else { return }
        let request = target.request(campaign: campaign, shard: shard, body: body())
        queue.async {
            let why = self.attempt(request)
            let warn = self.state.withLock { state -> Bool in
                state.busy = false
                defer { state.failing = why != nil }
                return why != nil && !state.failing
            }
            if warn, let why { self.warn(why) }
        }
    }

    /// At the run's end: pushes `body` after any push under way and waits for it (bounded).
    func pushAtEnd(body: String) {
        let request = target.request(campaign: campaign, shard: shard, body: body)
        let behind = state.withLock { $0.busy }
        let failure = Failure()
        let done = DispatchSemaphore(value: 0)
        queue.async {
            failure.set(self.attempt(request))
            done.signal()
        }
        let why: String?
        if done.wait(timeout: .now() + timeout * (behind ? 2 : 1) + 0.5) == .timedOut {
            why = "timed out after \(Int(timeout)) s"  // a name that does not resolve keeps getaddrinfo waiting
        } else {
            why = failure.get()
        }
        if let why { warn(why) }
    }

    private func warn(_ why: String) {
        StandardStream.error(
            PrintableText.escaping("apns-bulk: warning: could not push metrics to \(target.displayURL): \(why)") + "\n")
    }

    /// One push: nil when the gateway accepted it, else why not.
    private func attempt(_ request: [UInt8]) -> String? {
        do throws(TransportError) {
            let context = try tls.get()
            let answer = try BlockingExchange.exchange(
                host: target.host, port: target.port, request: request, timeout: timeout, tls: context
            ) {
                PushgatewayPush.verdict($0, ended: $1) != nil
            }
            switch PushgatewayPush.verdict(answer, ended: true) {
            case .accepted: return nil
            case .refused(let why): return why
            case nil: return "no answer"
            }
        } catch {
            guard error.kind == .certificateVerifyFailed, target.trustedCAFile == nil else { return error.description }
            return error.description + " (a gateway with its own CA: --pushgateway-ca-file FILE)"
        }
    }

    /// The end-of-run push's result, read once it signalled.
    private final class Failure: Sendable {
        private let why = Mutex<String?>(nil)
        func set(_ value: String?) { why.withLock { $0 = value } }
        func get() -> String? { why.withLock { $0 } }
    }
}
