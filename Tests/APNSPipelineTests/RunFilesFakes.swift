import APNSCore

@testable import APNSPipeline

/// A byte sink whose writes fail while `failing` is set.
final class FlakyByteSink: ByteSink {
    var failing = false
    private(set) var bytes: [UInt8] = []

    func write(_ bytes: [UInt8], count: Int) throws(PipelineError) {
        if failing { throw PipelineError(.writeFailed, "flaky: no space left on device") }
        self.bytes.append(contentsOf: bytes[0..<count])
    }
}

/// A result sink whose writes fail after `failAfter` results (a disk that fills up).
final class FailingSink: ResultSink {
    let failAfter: Int
    private(set) var written = 0

    init(failAfter: Int) { self.failAfter = failAfter }

    func write(_ result: ResultRecord) throws {
        guard written < failAfter else { throw PipelineError(.writeFailed, "no space left on device") }
        written += 1
    }

    func journalSent(_ key: RecordKey) throws {}
    func journalRetryable(_ key: RecordKey) throws {}
    func flush() throws {}
}

/// A transport that, like a real connection, answers from inside its read callback and, when closed, reports
/// requests still queued (never sent) as not sent, except when closed from inside that callback, where it can
/// only report them as lost (what the pool does when re-entered).
final class CallbackProbeTransport: PushTransport {
    weak var delegate: (any PushTransportDelegate)?
    let scheduler: ManualScheduler
    private var sent: [UInt64] = []
    private var queued: [UInt64] = []
    private var answering = false
    private(set) var closed = false
    private(set) var closedDuringAnswer = false

    init(scheduler: ManualScheduler) { self.scheduler = scheduler }

    var freeSlots: Int { closed ? 0 : max(0, 4 - sent.count - queued.count) }

    func submit(_ notification: PushNotification, tag: UInt64) { queued.append(tag) }

    /// Sends at most two queued requests (the rest wait, as behind a flow-control window).
    func flush() {
        let leaving = queued.prefix(2)
        sent += leaving
        queued.removeFirst(leaving.count)
        scheduler.schedule(after: 0.01) { [weak self] in self?.answerAll() }
    }

    /// One read: every sent request is answered.
    private func answerAll() {
        guard !closed else { return }
        answering = true
        while let tag = sent.first, !closed {
            sent.removeFirst()
            delegate?.transport(completed: tag, outcome: .answered(PushAnswer(status: 200, apnsID: "x")))
        }
        answering = false
        delegate?.transportHasFreeSlots()
    }

    func close(gracePeriod: Double) {
        guard !closed else { return }
        closed = true
        closedDuringAnswer = answering
        let lostOnes = sent + (answering ? queued : [])
        let unsent = answering ? [] : queued
        sent = []
        queued = []
        scheduler.schedule(after: 0) { [weak self] in
            guard let self else { return }
            for tag in lostOnes {
                self.delegate?.transport(completed: tag, outcome: .failed(.answerLost("connection closed")))
            }
            for tag in unsent {
                self.delegate?.transport(completed: tag, outcome: .failed(.notSent("never sent")))
            }
            self.delegate?.transportDidClose()
        }
    }
}
