import APNSCore

/// What a send run turns on, supplied by whoever links a transport (the CLI, over APNSTransport's event loop and
/// connection pool): the loop's clock and timers, the transport on that loop, and the stop signals the loop
/// delivers. The pipeline itself never sees the event loop, TLS or HTTP/2.
public protocol SendRunEngine: LoopScheduler {
    /// The transport the dispatcher sends through (it starts connecting when `run` starts).
    var transport: any PushTransport { get }

    /// Starts the transport, then runs loop turns on the calling thread until `stop()`. After a turn in which
    /// SIGINT/SIGTERM arrived, calls `onSignal` (on this thread) with how many have arrived in all.
    func run(onSignal: @escaping (_ signalsReceived: Int) -> Void)

    /// Makes `run` return after the current turn; called on the loop thread.
    func stop()

    /// Ends the loop's life once `run` has returned: drops timers and queued work, which hold the run's objects.
    func shutdown()
}
