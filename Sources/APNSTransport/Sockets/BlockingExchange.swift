internal import Glibc
import Foundation

/// One request and its whole answer over a plain TCP connection, blocking the calling thread, every step bounded by
/// one deadline (`poll`): how `--pushgateway` pushes the run's metrics once it has ended (docs/RUNNING.md
/// "Metrics"). Never for the event loop's thread.
public enum BlockingExchange {
    /// Connects to `host` (an IP literal or a name, resolved with `getaddrinfo`) at `port`, trying each address in
    /// turn, sends `request`, and reads until `isComplete` says the answer is whole (given the bytes so far and
    /// whether the peer closed) or the peer closes; at most `maximumResponse` bytes are kept.
    public static func exchange(
        host: String, port: Int, request: [UInt8], timeout: Double, maximumResponse: Int = 65_536,
        isComplete: ([UInt8], _ ended: Bool) -> Bool
    ) throws(TransportError) -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        let addresses = try SocketAddress.resolve(host: host, port: port)
        var lastError = TransportError(.nameResolutionFailed, host)
        for address in addresses {
            do {
                let socket = try connect(to: address, before: deadline)
                try sendAll(request, on: socket, before: deadline)
                return try receiveAnswer(on: socket, before: deadline, maximum: maximumResponse, isComplete: isComplete)
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

    private static func sendAll(_ bytes: [UInt8], on socket: Socket, before deadline: Date) throws(TransportError) {
        var sent = 0
        while sent < bytes.count {
            let result = socket.send(bytes.span.extracting(sent...).bytes)
            switch result {
            case .transferred(let count): sent += count
            case .wouldBlock: try wait(socket, for: Int16(POLLOUT), before: deadline, doing: "send")
            case .endOfFile: throw TransportError(.closedByPeer, "send")
            case .failed(let code): throw TransportError.socket("send", code)
            }
        }
    }

    private static func receiveAnswer(
        on socket: Socket, before deadline: Date, maximum: Int, isComplete: ([UInt8], Bool) -> Bool
    ) throws(TransportError) -> [UInt8] {
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            switch socket.receive(into: &buffer) {
            case .transferred(let count):
                answer += buffer[..<min(count, max(0, maximum - answer.count))]
                if answer.count >= maximum || isComplete(answer, false) { return answer }
            case .endOfFile:
                _ = isComplete(answer, true)
                return answer
            case .wouldBlock:
                try wait(socket, for: Int16(POLLIN), before: deadline, doing: "read the answer")
            case .failed(let code):
                throw TransportError.socket("read the answer", code)
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
