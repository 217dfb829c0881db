internal import Glibc

/// Owns one non-blocking TCP socket descriptor and closes it in `deinit` (or `close()`). Whoever registers the
/// descriptor with an `EventLoop` must deregister it before the socket closes.
public final class Socket {
    /// The descriptor; -1 once closed.
    public private(set) var fd: Int32

    /// Takes ownership of `fd` (already non-blocking and close-on-exec).
    init(adopting fd: Int32) {
        self.fd = fd
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }

    /// A new non-blocking, close-on-exec TCP socket for `family`.
    static func tcp(family: Int32) throws(TransportError) -> Socket {
        let fd = Glibc.socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TransportError.system("socket", errno) }
        return Socket(adopting: fd)
    }

    /// A connected pair of non-blocking stream sockets (AF_UNIX), for tests and in-process plumbing.
    public static func pair() throws(TransportError) -> (Socket, Socket) {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw TransportError.system("socketpair", errno) }
        return (Socket(adopting: fds[0]), Socket(adopting: fds[1]))
    }

    /// Whether the descriptor is still open.
    public var isOpen: Bool { fd >= 0 }

    /// Starts a non-blocking connect. True when already connected, false when in progress (wait for writable,
    /// then check `takePendingError()`).
    func startConnect(to address: SocketAddress) throws(TransportError) -> Bool {
        let result = SocketSystemCalls.withSockAddr(address) { Glibc.connect(fd, $0, $1) }
        if result == 0 { return true }
        let code = errno
        if code == EINPROGRESS || code == EINTR { return false }
        throw TransportError.socket("connect to \(address)", code)
    }

    /// Reads and clears the socket's pending error (`SO_ERROR`); 0 when there is none.
    func takePendingError() -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return errno }
        return code
    }

    /// Disables Nagle's algorithm: HTTP/2 frames go out when written.
    public func setNoDelay() throws(TransportError) {
        var on: Int32 = 1
        guard setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw TransportError.system("setsockopt(TCP_NODELAY)", errno)
        }
    }

    /// The local address (after connect or bind).
    public func localAddress() -> SocketAddress? {
        SocketSystemCalls.address(of: fd, peer: false)
    }

    /// The peer's address (once connected).
    public func peerAddress() -> SocketAddress? {
        SocketSystemCalls.address(of: fd, peer: true)
    }

    /// Ends the sending side (`shutdown(SHUT_WR)`): the peer reads end-of-file once what was sent arrives, and can
    /// still send. Does nothing on a closed socket; a failure (the peer already gone) is left to the next read.
    public func shutdownWrite() {
        guard fd >= 0 else { return }
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the descriptor now (idempotent).
    public func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }
}
