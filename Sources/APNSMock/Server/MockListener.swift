import APNSTransport

/// The loop-confined heart of a mock server: the listening socket, the TLS context, the one `MockValidator`
/// every connection shares (so counters and faults are server-wide), and the open connections.
final class MockListener {
    let loop: EventLoop
    let tlsContext: TLSServerContext
    var validator: MockValidator
    let initialLimitEnforcement: MockServer.InitialLimitEnforcement
    /// Where accepted notifications are logged before their answer leaves, if anywhere.
    let acceptedLog: MockAcceptedLog?
    /// The bound address (the real port when port 0 was asked for).
    private(set) var address: SocketAddress?
    private var socketListener: SocketListener?
    private var connections: [ObjectIdentifier: MockServerConnection] = [:]

    /// Binds `host:port` (port 0: any free port) and starts accepting.
    init(
        loop: EventLoop, validator: MockValidator, tlsContext: TLSServerContext,
        initialLimitEnforcement: MockServer.InitialLimitEnforcement, host: String, port: Int,
        acceptedLog: MockAcceptedLog? = nil
    ) throws(TransportError) {
        self.acceptedLog = acceptedLog
        self.loop = loop
        self.validator = validator
        self.initialLimitEnforcement = initialLimitEnforcement
        self.tlsContext = tlsContext
        let listener = try SocketListener(loop: loop, host: host, port: port) { [weak self] socket in
            self?.accept(socket)
        }
        socketListener = listener
        address = listener.address
    }

    /// Connections currently open (handshaking included).
    var connectionCount: Int { connections.count }

    private func accept(_ socket: Socket) {
        try? socket.setNoDelay()  // small answers go out at once; a failure only costs latency
        do {
            let connection = try MockServerConnection.accept(
                socket, listener: self, enforcement: initialLimitEnforcement)
            connections[ObjectIdentifier(connection)] = connection
        } catch {
            socket.close()  // could not set up TLS for it (out of memory or descriptors): refuse this one
        }
    }

    func connectionEnded(_ connection: MockServerConnection) {
        connections.removeValue(forKey: ObjectIdentifier(connection))
    }

    /// Stops listening and closes every connection at once; returns the final counters.
    func shutdown() -> MockCounters {
        socketListener?.close()
        socketListener = nil
        let open = Array(connections.values)
        connections.removeAll()
        for connection in open { connection.finish(gracefully: false) }
        return validator.counters
    }
}
