import APNSCore

/// What an `APNSClientConnection` reports to the pool that owns it, on the event-loop thread.
protocol APNSClientConnectionOwner: AnyObject {
    /// A request ended: answered, or failed with what the connection knows about it. `tokenSerial` is the serial of
    /// the provider token the request carried (0 without one).
    func connection(
        _ connection: APNSClientConnection, completed tag: UInt64, outcome: PushOutcome,
        tokenSerial: Int)
    /// The handshake is done and HTTP/2 is up.
    func connectionBecameReady(_ connection: APNSClientConnection)
    /// The server changed how many streams may be open, or the connection stopped or resumed taking requests after
    /// a request timeout: `connection.load` changed.
    func connectionLoadChanged(_ connection: APNSClientConnection)
    /// The connection stopped taking new streams on its own (GOAWAY, stream ids used up): it drains.
    func connectionStoppedTakingStreams(_ connection: APNSClientConnection)
    /// The connection is gone; every request it carried has been reported. `error` is nil for a clean close.
    func connection(_ connection: APNSClientConnection, closedWith error: TransportError?)
}
