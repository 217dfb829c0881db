internal import Glibc

/// The outcome of one non-blocking socket read or write.
public enum SocketIOResult: Equatable, Sendable {
    /// This many bytes moved (never zero for reads: see `endOfFile`).
    case transferred(Int)
    /// Nothing can move now (`EAGAIN`); wait for readiness.
    case wouldBlock
    /// The peer closed its side (reads only).
    case endOfFile
    /// The call failed with this `errno`.
    case failed(Int32)

    /// The result of a `recv`/`send` that returned `count` (reads: 0 is the end of the stream), `errno` when < 0.
    static func of(_ count: Int, reading: Bool, errno code: Int32) -> SocketIOResult {
        if count > 0 || (count == 0 && !reading) { return .transferred(count) }
        if count == 0 { return .endOfFile }
        return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
    }
}

extension Socket {
    /// Reads what is available into the start of `buffer`, at most `maxCount` bytes and at most `buffer.count`.
    public func receive(into buffer: inout [UInt8], maxCount: Int = .max) -> SocketIOResult {
        SocketSystemCalls.receive(fd, into: &buffer, maxCount: maxCount, flags: 0)
    }

    /// Copies what is available into the start of `buffer` without consuming it (`MSG_PEEK`).
    func peek(into buffer: inout [UInt8], maxCount: Int = .max) -> SocketIOResult {
        SocketSystemCalls.receive(fd, into: &buffer, maxCount: maxCount, flags: Int32(MSG_PEEK))
    }

    /// Writes what the kernel takes now; never raises SIGPIPE (`MSG_NOSIGNAL`).
    public func send(_ bytes: RawSpan) -> SocketIOResult {
        SocketSystemCalls.send(fd, bytes)
    }
}
