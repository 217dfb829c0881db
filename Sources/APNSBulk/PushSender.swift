import APNSCore
import APNSTransport

/// Sends notifications from Swift code and hands back APNs' answers: an event loop and a connection pool of its own
/// (persistent TLS connections, HTTP/2 streams, the provider token kept fresh), driven on the calling thread for as
/// long as one `send` lasts. For a whole campaign from files, with its result file, retries and resume, run
/// `SendRun.run` on an `EventLoopSendEngine` instead. Not thread-safe: use it from one thread at a time (a thread or
/// a `Task.detached` of its own, since `send` blocks).
public final class PushSender {
    private let loop: EventLoop
    private let pool: APNSClientPool
    private let answers = PushSenderAnswers()
    private var started = false
    private var closed = false

    /// Builds the sender (reads the key or certificate, sets up TLS); it connects on the first `send`.
    public init(configuration: APNSClientConfiguration) throws {
        loop = try EventLoop()
        do {
            pool = try APNSClientPool(configuration: configuration, loop: loop)
        } catch {
            loop.shutdown()
            throw error
        }
        pool.delegate = answers
    }

    deinit {
        if !closed { loop.shutdown() }
    }

    /// Sends `notifications` over the pool's connections (as many at once as their streams allow) and returns
    /// each one's outcome, in the same order: APNs' answer (`.answered`, its status and reason), or why there is
    /// none (`.failed`: not sent, so safe to send again, or sent and its answer lost, so in doubt). A request not
    /// answered within the configuration's `requestTimeout` ends `.failed(.answerLost)`. Throws
    /// `PushSenderError.transportFailed` when the pool cannot work at all (a key APNs refuses, a certificate that
    /// does not verify, no connection within its reconnect limit), after the requests in flight are answered.
    public func send(_ notifications: [PushNotification]) throws(PushSenderError) -> [PushOutcome] {
        guard !closed else { throw .closed }
        if !started {
            started = true
            pool.start()
        }
        answers.begin(count: notifications.count)
        var submitted = 0
        while answers.answeredCount < notifications.count {
            if let failure = answers.failure, answers.answeredCount == submitted {
                answers.failure = nil  // a later send tries again (the pool reconnects)
                throw .transportFailed(failure, outcomes: answers.outcomes)
            }
            let before = submitted
            while submitted < notifications.count, pool.freeSlots > 0 {
                pool.submit(notifications[submitted], tag: UInt64(submitted))
                submitted += 1
            }
            if submitted > before { pool.flush() }
            loop.runOnce(timeout: nil)
        }
        return answers.outcomes.map { $0 ?? .failed(.notSent("no answer")) }
    }

    /// Sends one notification and returns its outcome (`send(_:)` with one).
    public func send(_ notification: PushNotification) throws(PushSenderError) -> PushOutcome {
        try send([notification])[0]
    }

    /// Closes the connections (requests still in flight get `gracePeriod` seconds for their answers) and ends the
    /// loop. The sender cannot send after it.
    public func close(gracePeriod: Double = 5) {
        guard !closed else { return }
        closed = true
        if started {
            pool.close(gracePeriod: gracePeriod)
            while !answers.transportClosed { loop.runOnce(timeout: nil) }
        }
        loop.shutdown()
    }
}

/// Why `PushSender.send` could not finish.
public enum PushSenderError: Error, CustomStringConvertible {
    /// The connections cannot work (the transport's reason); `outcomes` holds what was answered before, in the
    /// order of the notifications given (nil: not answered, never sent).
    case transportFailed(String, outcomes: [PushOutcome?])
    /// `close()` was called.
    case closed

    /// The error as one printable line.
    public var description: String {
        switch self {
        case .transportFailed(let why, _): return "cannot send to APNs: \(why)"
        case .closed: return "the sender is closed"
        }
    }
}

/// The outcomes of one `PushSender.send`, as the pool reports them on the loop thread.
final class PushSenderAnswers: PushTransportDelegate {
    private(set) var outcomes: [PushOutcome?] = []
    private(set) var answeredCount = 0
    var failure: String?
    private(set) var transportClosed = false

    func begin(count: Int) {
        outcomes = Array(repeating: nil, count: count)
        answeredCount = 0
    }

    func transport(completed tag: UInt64, outcome: consuming PushOutcome) {
        let index = Int(tag)
        guard index < outcomes.count, outcomes[index] == nil else { return }
        outcomes[index] = outcome
        answeredCount += 1
    }

    func transportHasFreeSlots() {}

    func transportFailed(_ error: any Error) {
        failure = String(describing: error)
    }

    func transportDidClose() {
        transportClosed = true
    }
}
