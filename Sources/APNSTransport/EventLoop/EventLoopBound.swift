/// Carries a loop-confined value (a pool, a server, a connection) through `EventLoopHandle.execute`, which only
/// accepts Sendable closures: the value may be taken out only on its own loop's thread, which is checked.
/// A signal handler on a dispatch queue can thus reach the pool: `handle.execute { bound.value(in: $0).close() }`.
public struct EventLoopBound<Value>: @unchecked Sendable {
    // Sendable by construction: `value` is read only on the loop's thread (checked in `value(in:)`).
    private let value: Value
    private let loop: ObjectIdentifier

    /// Wraps `value`, which belongs to `loop`; call on the loop's thread.
    public init(_ value: Value, loop: EventLoop) {
        precondition(loop.isInLoopThread, "EventLoopBound created off its loop's thread")
        self.value = value
        self.loop = ObjectIdentifier(loop)
    }

    /// The value, from inside work running on its loop (the `EventLoop` that `execute` passes in).
    public func value(in loop: EventLoop) -> Value {
        precondition(ObjectIdentifier(loop) == self.loop && loop.isInLoopThread,
                     "EventLoopBound value taken off its loop")
        return value
    }
}
