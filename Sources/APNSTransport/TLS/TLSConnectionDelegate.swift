/// Hears from a `TLSConnection`, on the event loop's thread. The owner (an HTTP/2 connection) implements it.
///
/// Contract: after `didCloseWith`, or after the owner called `close()`/`abort()`, nothing more is reported.
/// No callback is made from inside the connection's initializers or `connect`.
public protocol TLSConnectionDelegate: AnyObject {
    /// The handshake completed (and, on a client, ALPN and pins were checked). Writes made before this are
    /// flushed right after it returns.
    func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo)

    /// Decrypted bytes arrived. `bytes` borrows a buffer the loop reuses: it lives only during this call.
    func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan)

    /// Output that had to wait for the socket (the kernel buffer was full) has all gone out: a good moment to
    /// produce more.
    func tlsConnectionDidDrainOutput(_ connection: TLSConnection)

    /// The connection ended: nil when the peer closed cleanly (close_notify), else why (connect or handshake
    /// failure, certificate, pin or ALPN refusal, EOF without close_notify, reset, timeout).
    func tlsConnection(_ connection: TLSConnection, didCloseWith error: TransportError?)
}
