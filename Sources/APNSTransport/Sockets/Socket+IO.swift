import Glibc

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
}

extension Socket {
    /// Reads what is available into `buffer`.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) -> SocketIOResult {
        receive(into: buffer, flags: 0)
    }

    /// Copies what is available into `buffer` without consuming it (`MSG_PEEK`).
    func peek(into buffer: UnsafeMutableRawBufferPointer) -> SocketIOResult {
        receive(into: buffer, flags: Int32(MSG_PEEK))
    }

    /// Writes what the kernel takes now; never raises SIGPIPE (`MSG_NOSIGNAL`).
    public func send(_ bytes: UnsafeRawBufferPointer) -> SocketIOResult {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .transferred(0) }
        while true {
            let count = Glibc.send(fd, base, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .transferred(count) }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
        }
    }

    /// Shuts down the write side (sends FIN), keeping the read side open.
    public func shutdownWrite() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    private func receive(into buffer: UnsafeMutableRawBufferPointer, flags: Int32) -> SocketIOResult {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .transferred(0) }
        while true {
            let count = recv(fd, base, buffer.count, flags)
            if count > 0 { return .transferred(count) }
            if count == 0 { return .endOfFile }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
        }
    }
}
