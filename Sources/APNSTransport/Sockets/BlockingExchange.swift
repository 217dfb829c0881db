import Foundation
internal import Glibc

/// One request and its whole answer over a TCP connection, plain or TLS, blocking the calling thread, every step
/// bounded by one deadline (`poll`): how `--pushgateway` pushes the run's metrics (docs/RUNNING.md "Metrics").
/// Never for the event loop's thread.
public enum BlockingExchange {
    /// Connects to `host` (an IP literal or a name, resolved with `getaddrinfo`) at `port`, trying each address in
    /// turn, runs a TLS handshake verifying `host` when `tls` is given, sends `request`, and reads until
    /// `isComplete` says the answer is whole (given the bytes so far and whether the peer closed) or the peer
    /// closes; at most `maximumResponse` bytes are kept.
    public static func exchange(
        host: String, port: Int, request: [UInt8], timeout: Double, tls: TLSClientContext? = nil,
        maximumResponse: Int = 65_536, isComplete: ([UInt8], _ ended: Bool) -> Bool
    ) throws(TransportError) -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        let addresses = try SocketAddress.resolve(host: host, port: port)
        var lastError = TransportError(.nameResolutionFailed, host)
        for address in addresses {
            do {
                let socket = try connect(to: address, before: deadline)
                var channel = Channel.plain(socket)
                if let tls {
                    let session = try TLSSessionOpenSSL(context: tls.context, fd: socket.fd, serverName: host)
                    channel = .tls(socket, session)
                    try channel.handshake(before: deadline)
                }
                try channel.sendAll(request, before: deadline)
                return try channel.receiveAnswer(before: deadline, maximum: maximumResponse, isComplete: isComplete)
            } catch {
                lastError = error
                if error.kind == .timeout { break }  // the deadline is spent: no time for another address
            }
        }
        throw lastError
    }

    private static func connect(to address: SocketAddress, before deadline: Date) throws(TransportError) -> Socket {
        let socket = try Socket.tcp(family: address.family)
        if try socket.startConnect(to: address) { return socket }
        try wait(socket, for: Int16(POLLOUT), before: deadline, doing: "connect to \(address)")
        let code = socket.takePendingError()
        guard code == 0 else { throw TransportError.socket("connect to \(address)", code) }
        return socket
    }

    /// The connected socket, and its TLS session when there is one: the three steps for either.
    private enum Channel {
        case plain(Socket)
        case tls(Socket, TLSSessionOpenSSL)

        var socket: Socket {
            switch self {
            case .plain(let socket), .tls(let socket, _): return socket
            }
        }

        /// The TLS handshake (certificate and host name verified by the session), each want waited for.
        func handshake(before deadline: Date) throws(TransportError) {
            guard case .tls(let socket, let session) = self else { return }
            while true {
                switch session.handshake() {
                case .transferred: return
                case .wantRead: try wait(socket, for: Int16(POLLIN), before: deadline, doing: "TLS handshake")
                case .wantWrite: try wait(socket, for: Int16(POLLOUT), before: deadline, doing: "TLS handshake")
                case .failed(let error): throw error
                case .closeNotify, .endOfFile: throw TransportError(.handshakeFailed, "the peer closed the connection")
                }
            }
        }

        func sendAll(_ bytes: [UInt8], before deadline: Date) throws(TransportError) {
            var sent = 0
            while sent < bytes.count {
                let rest = bytes.span.extracting(sent...).bytes
                switch self {
                case .plain(let socket):
                    switch socket.send(rest) {
                    case .transferred(let count): sent += count
                    case .wouldBlock: try wait(socket, for: Int16(POLLOUT), before: deadline, doing: "send")
                    case .endOfFile: throw TransportError(.closedByPeer, "send")
                    case .failed(let code): throw TransportError.socket("send", code)
                    }
                case .tls(let socket, let session):
                    switch session.write(rest) {
                    case .transferred(let count): sent += count
                    case .wantRead: try wait(socket, for: Int16(POLLIN), before: deadline, doing: "send")
                    case .wantWrite: try wait(socket, for: Int16(POLLOUT), before: deadline, doing: "send")
                    case .closeNotify, .endOfFile: throw TransportError(.closedByPeer, "send")
                    case .failed(let error): throw error
                    }
                }
            }
        }

        func receiveAnswer(
            before deadline: Date, maximum: Int, isComplete: ([UInt8], Bool) -> Bool
        ) throws(TransportError) -> [UInt8] {
            var answer: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let step = try receive(into: &buffer, before: deadline)
                guard let count = step else {
                    _ = isComplete(answer, true)
                    return answer
                }
                answer += buffer[..<min(count, max(0, maximum - answer.count))]
                if answer.count >= maximum || isComplete(answer, false) { return answer }
            }
        }

        /// The next bytes read into `buffer` (their count), nil once the peer has ended the connection.
        private func receive(into buffer: inout [UInt8], before deadline: Date) throws(TransportError) -> Int? {
            while true {
                switch self {
                case .plain(let socket):
                    switch socket.receive(into: &buffer) {
                    case .transferred(let count): return count
                    case .endOfFile: return nil
                    case .wouldBlock: try wait(socket, for: Int16(POLLIN), before: deadline, doing: "read the answer")
                    case .failed(let code): throw TransportError.socket("read the answer", code)
                    }
                case .tls(let socket, let session):
                    switch session.read(into: &buffer) {
                    case .transferred(let count): return count
                    case .closeNotify, .endOfFile: return nil
                    case .wantRead: try wait(socket, for: Int16(POLLIN), before: deadline, doing: "read the answer")
                    case .wantWrite: try wait(socket, for: Int16(POLLOUT), before: deadline, doing: "read the answer")
                    case .failed(let error): throw error
                    }
                }
            }
        }
    }

    /// Waits until `socket` is ready for `events` or the deadline passes (then `.timeout`).
    private static func wait(_ socket: Socket, for events: Int16, before deadline: Date, doing what: String)
        throws(TransportError)
    {
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw TransportError(.timeout, what) }
            var entry = pollfd(fd: socket.fd, events: events, revents: 0)
            let ready = poll(&entry, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw TransportError.system("poll", errno) }
        }
    }
}
