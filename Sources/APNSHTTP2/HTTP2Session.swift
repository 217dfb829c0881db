/// What the client and server sessions share: the nghttp2 session they own, bytes in (`receive`) and out
/// (`produceOutput`), PING, and the session's end, once, when nghttp2 neither reads nor writes any more (or, once
/// `closesWhenOutputDrained` is set, when the output is drained), when nghttp2 fails, or when the connection is
/// gone. A subclass records what happens (`recordConnectionError`) and settles its streams (`sessionEnded`).
public class HTTP2Session {
    let nghttp2: Nghttp2Session
    /// Set by a terminating GOAWAY: the session is over once its output is drained.
    @exclusivity(unchecked)
    var closesWhenOutputDrained = false
    /// Whether the session has ended: nothing more is read or written.
    @exclusivity(unchecked)
    public private(set) var isClosed = false

    init(_ start: Nghttp2Session.Start) throws(HTTP2Error) {
        self.nghttp2 = try Nghttp2Session(start)
    }

    deinit {
        nghttp2.detach()
    }

    /// Whether nghttp2 still expects input.
    public var wantsRead: Bool { !isClosed && nghttp2.wantsRead }
    /// Whether `produceOutput` has something to produce.
    public var wantsWrite: Bool { !isClosed && nghttp2.wantsWrite }

    /// Feeds bytes read from the connection. What they cause is recorded as events; a connection failure is a
    /// `.connectionError` event and closes the session.
    public func receive(_ bytes: RawSpan) {
        guard !isClosed else { return }
        if let error = nghttp2.receive(bytes) {
            fail(with: error)
            return
        }
        inputProcessed()
        if !nghttp2.wantsRead, !nghttp2.wantsWrite { finish() }
    }

    /// `receive` for an array.
    public func receive(_ bytes: [UInt8]) {
        receive(bytes.span.bytes)
    }

    /// Appends what is ready to send to `buffer` (a buffer the caller reuses), up to about `limit` bytes (a frame
    /// may overshoot it). Returns the number of bytes appended.
    @discardableResult
    public func produceOutput(into buffer: inout [UInt8], limit: Int = Int.max) -> Int {
        guard !isClosed else { return 0 }
        switch nghttp2.produceOutput(into: &buffer, limit: limit) {
        case .success(let count):
            if !nghttp2.wantsWrite, closesWhenOutputDrained || !nghttp2.wantsRead { finish() }
            return count
        case .failure(let error):
            fail(with: error)
            return 0
        }
    }

    /// Queues a PING; its acknowledgement comes back as `.pingAcknowledged(payload)`.
    public func submitPing(payload: UInt64) throws(HTTP2Error) {
        guard !isClosed else { throw .sessionClosing }
        let status = nghttp2.submitPing(payload: payload)
        guard status == 0 else { throw Nghttp2Session.error(status) }
    }

    /// The connection is gone (the peer closed it, the socket failed, the owner gave up): the session closes now.
    public func connectionClosed() {
        finish()
    }

    /// Ends the session, once.
    func finish() {
        guard !isClosed else { return }
        isClosed = true
        sessionEnded()
    }

    /// nghttp2 failed for good: report it, then end the session.
    private func fail(with error: HTTP2Error) {
        recordConnectionError(error)
        finish()
    }

    /// Input was processed without a failure, before the session checks whether it is finished. Nothing here.
    func inputProcessed() {}

    /// Records a `.connectionError` event. A subclass overrides it.
    func recordConnectionError(_ error: HTTP2Error) {
        preconditionFailure("HTTP2Session.recordConnectionError is overridden by each session")
    }

    /// The session has just closed: settle its open streams. A subclass overrides it.
    func sessionEnded() {
        preconditionFailure("HTTP2Session.sessionEnded is overridden by each session")
    }
}
