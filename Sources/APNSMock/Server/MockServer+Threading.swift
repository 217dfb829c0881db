import APNSTransport
import Foundation
import Synchronization

/// The hand-over from a starting server's thread to `MockServer.start`: the bound address and loop handle, or
/// why it could not start.
final class MockServerStartup: Sendable {
    struct Started: Sendable {
        let address: SocketAddress
        let handle: EventLoopHandle
        let listener: EventLoopBound<MockListener>
    }

    private let result = Mutex<Result<Started, MockServerError>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func succeed(_ started: Started) {
        result.withLock { $0 = .success(started) }
        ready.signal()
    }

    func fail(_ error: MockServerError) {
        result.withLock { $0 = .failure(error) }
        ready.signal()
    }

    func wait() throws(MockServerError) -> Started {
        ready.wait()
        let outcome = result.withLock { $0 } ?? .failure(.eventLoop("the server thread ended without starting"))
        return try outcome.get()
    }
}

/// Whether a server's thread has ended, and the counters it ended with. Waiting is a latch: every waiter
/// passes once the thread has finished.
final class MockServerLifecycle: Sendable {
    private let final = Mutex<MockCounters?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// The final counters, once the thread has finished.
    var finalCounters: MockCounters? { final.withLock { $0 } }

    func finish(_ counters: MockCounters) {
        final.withLock { $0 = counters }
        finished.signal()
    }

    /// Blocks until the thread has finished; returns the final counters.
    @discardableResult
    func waitUntilFinished() -> MockCounters {
        if let counters = finalCounters { return counters }
        finished.wait()
        finished.signal()  // let the next waiter through too
        return finalCounters ?? MockCounters()
    }
}

/// One answer posted back from the loop's thread.
final class MockServerReply<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let delivered = DispatchSemaphore(value: 0)

    func deliver(_ answer: Value) {
        value.withLock { $0 = answer }
        delivered.signal()
    }

    /// The answer, or nil when none arrived within `seconds`.
    func wait(seconds: Double) -> Value? {
        guard delivered.wait(timeout: .now() + seconds) == .success else { return nil }
        return value.withLock { $0 }
    }
}
