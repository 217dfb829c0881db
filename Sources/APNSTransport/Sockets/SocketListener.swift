internal import Glibc

/// Owns a listening TCP socket registered with an `EventLoop`: accepts connections (non-blocking, close-on-exec,
/// `TCP_NODELAY`) and hands each one to `onAccept`. Stays registered, and so alive, until `close()`.
public final class SocketListener: EventLoopHandler {
    /// The bound address, with the real port when port 0 was asked for.
    public let address: SocketAddress
    /// The port listened on, useful when it was chosen by the system.
    public var port: Int { address.port }

    private let loop: EventLoop
    private let socket: Socket
    private let onAccept: (Socket) -> Void
    private var pausedTimer: EventLoopTimer?
    private static let acceptsPerTurn = 64

    /// Binds `host` (an IP literal or a name resolved now, blocking) at `port` (0 = any free port), listens and
    /// registers with `loop`. `onAccept` runs on the loop for every accepted connection.
    public convenience init(
        loop: EventLoop, host: String = "127.0.0.1", port: Int = 0, backlog: Int32 = 511,
        onAccept: @escaping (Socket) -> Void
    ) throws(TransportError) {
        guard let address = try SocketAddress.resolve(host: host, port: port).first else {
            throw TransportError(.nameResolutionFailed, host)
        }
        try self.init(loop: loop, address: address, backlog: backlog, onAccept: onAccept)
    }

    /// A listener on the given address; throws when it cannot bind or listen.
    public init(
        loop: EventLoop, address: SocketAddress, backlog: Int32 = 511,
        onAccept: @escaping (Socket) -> Void
    ) throws(TransportError) {
        let socket = try Socket.tcp(family: address.family)
        var on: Int32 = 1
        _ = setsockopt(socket.fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard SocketSystemCalls.withSockAddr(address, { bind(socket.fd, $0, $1) }) == 0 else {
            throw TransportError.system("bind \(address)", errno)
        }
        guard listen(socket.fd, backlog) == 0 else { throw TransportError.system("listen \(address)", errno) }
        guard let bound = socket.localAddress() else { throw TransportError.system("getsockname", errno) }
        self.address = bound
        self.loop = loop
        self.socket = socket
        self.onAccept = onAccept
        try loop.register(socket.fd, interest: .read, handler: self)
    }

    /// Stops listening and closes the socket; accepted connections are unaffected.
    public func close() {
        guard socket.isOpen else { return }
        pausedTimer?.cancel()
        loop.deregister(socket.fd)
        socket.close()
    }

    /// Accepts the connections waiting.
    public func readable() {
        for _ in 0..<Self.acceptsPerTurn {
            let fd = accept(socket.fd, nil, nil)  // accept4 needs _GNU_SOURCE, which Glibc's module lacks
            if fd >= 0 {
                let accepted = Socket(adopting: fd)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                try? accepted.setNoDelay()  // HTTP/2 frames go out when written; a failure here is harmless
                onAccept(accepted)
                guard socket.isOpen else { return }  // onAccept closed the listener
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK: return
            case EINTR, ECONNABORTED, EPROTO: continue
            default:
                // Out of descriptors or memory: the pending connection stays queued and level-triggered epoll
                // would report it again at once. Pause accepting for a moment instead of spinning.
                pauseAccepting()
                return
            }
        }
    }

    /// Does nothing: a listener never writes.
    public func writable() {}

    /// Does nothing: a listener is not hung up.
    public func hangup() {}

    private func pauseAccepting() {
        guard pausedTimer == nil else { return }
        loop.setInterest(.none, for: socket.fd)
        pausedTimer = loop.schedule(after: 0.1) { [weak self] in
            guard let self, self.socket.isOpen else { return }
            self.pausedTimer = nil
            self.loop.setInterest(.read, for: self.socket.fd)
        }
    }
}
