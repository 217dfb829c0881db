import APNSCore
import APNSPipeline
import APNSTransport
import Foundation
import Synchronization

/// A run's last step with `--pushgateway` (docs/RUNNING.md "Metrics"): the metrics POSTed to the gateway on a
/// background thread and waited for at most `timeout`; a push that fails is one warning line on stderr and changes
/// nothing else (not the exit status, not the files).
enum MetricsPusher {
    /// How long the end of a run waits for the gateway, from connecting to its answer.
    static let timeout = 5.0

    /// Pushes `body` (CampaignMetrics' text) under the grouping key of `campaign` and `shard`.
    static func push(_ target: PushgatewayPush, campaign: String, shard: String, body: String, timeout: Double = timeout) {
        let request = target.request(campaign: campaign, shard: shard, body: body)
        let failure = Failure()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            failure.set(attempt(target, request: request, timeout: timeout))
            done.signal()
        }
        let why: String?
        if done.wait(timeout: .now() + timeout + 0.5) == .timedOut {
            why = "timed out after \(Int(timeout)) s"  // a name that does not resolve keeps getaddrinfo waiting
        } else {
            why = failure.get()
        }
        guard let why else { return }
        StandardStream.error(PrintableText.escaping("apns-bulk: warning: could not push metrics to \(target.displayURL): \(why)") + "\n")
    }

    /// One push: nil when the gateway accepted it, else why not.
    private static func attempt(_ target: PushgatewayPush, request: [UInt8], timeout: Double) -> String? {
        do {
            let answer = try BlockingExchange.exchange(host: target.host, port: target.port, request: request, timeout: timeout) {
                PushgatewayPush.verdict($0, ended: $1) != nil
            }
            switch PushgatewayPush.verdict(answer, ended: true) {
            case .accepted: return nil
            case .refused(let why): return why
            case nil: return "no answer"
            }
        } catch {
            return error.description
        }
    }

    /// The background push's result, read once it signalled.
    private final class Failure: Sendable {
        private let why = Mutex<String?>(nil)
        func set(_ value: String?) { why.withLock { $0 = value } }
        func get() -> String? { why.withLock { $0 } }
    }
}
