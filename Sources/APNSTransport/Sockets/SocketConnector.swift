/// Drives one non-blocking TCP connect: tries the addresses in order until one accepts, within an overall
/// deadline. Owns the socket being connected (and its loop registration) until it hands it to `completion`,
/// connected, with `TCP_NODELAY` set, and no longer registered.
public final class SocketConnector: EventLoopHandler {
    private let loop: EventLoop
    private var addresses: ArraySlice<SocketAddress>
    private var completion: ((Result<Socket, TransportError>) -> Void)?
    private var socket: Socket?
    private var current: SocketAddress?
    private var timer: EventLoopTimer?
    private var lastError: TransportError?
    private let timeout: Double

    /// Prepares to connect to `addresses`; `completion` runs once, on the loop, never from inside `start()`.
    /// Once started, the connector keeps itself alive until it completes or is cancelled.
    public init(loop: EventLoop, addresses: [SocketAddress], timeout: Double,
                completion: @escaping (Result<Socket, TransportError>) -> Void) {
        self.loop = loop
        self.addresses = addresses[...]
        self.timeout = timeout
        self.completion = completion
    }

    /// Starts connecting.
    public func start() {
        // The timer's closure keeps the connector alive while it works; finishing cancels it.
        timer = loop.schedule(after: timeout) {
            let target = self.current.map { " to \($0)" } ?? ""
            self.finish(.failure(TransportError(.timeout, "connect\(target) after \(self.timeout)s")))
        }
        loop.executeNextTurn { self.tryNextAddress() }
    }

    /// Gives up: closes the socket; `completion` is not called.
    public func cancel() {
        completion = nil
        finish(.failure(TransportError(.timeout, "cancelled")))
    }

    public func readable() {}

    public func writable() {
        guard let socket, let current else { return }
        let code = socket.takePendingError()
        loop.deregister(socket.fd)
        if code == 0 {
            self.socket = nil
            finish(.success(socket))
        } else {
            lastError = TransportError.socket("connect to \(current)", code)
            socket.close()
            self.socket = nil
            tryNextAddress()
        }
    }

    public func hangup() { writable() }

    private func tryNextAddress() {
        guard completion != nil else { return }
        while let address = addresses.popFirst() {
            current = address
            do throws(TransportError) {
                let socket = try Socket.tcp(family: address.family)
                if try socket.startConnect(to: address) {
                    finish(.success(socket))
                    return
                }
                try loop.register(socket.fd, interest: .write, handler: self)
                self.socket = socket
                return
            } catch {
                lastError = error
            }
        }
        finish(.failure(lastError ?? TransportError(.connectFailed, "no addresses to connect to")))
    }

    private func finish(_ result: Result<Socket, TransportError>) {
        timer?.cancel()
        timer = nil
        if let socket {
            loop.deregister(socket.fd)
            socket.close()
            self.socket = nil
        }
        addresses = []
        guard let completion else { return }
        self.completion = nil
        if case .success(let connected) = result {
            do throws(TransportError) {
                try connected.setNoDelay()
            } catch {
                completion(.failure(error))
                return
            }
        }
        completion(result)
    }
}
