import Testing

@testable import APNSTransport

/// `SocketConnector` over real loopback sockets: the addresses tried in order past the ones that refuse, each
/// attempt's end reported, every socket but the winner closed. (A black hole needs a network namespace: the
/// end-to-end tests in `AddressesEndToEndTests` make one.)
@Suite("socket connector")
struct SocketConnectorTests {
    /// A port on 127.0.0.1 where nothing listens (a listener opened and closed).
    func closedPort(_ loop: EventLoop) throws -> Int {
        let listener = try SocketListener(loop: loop) { _ in }
        let port = listener.port
        listener.close()
        return port
    }

    @Test("refusing addresses are passed at once; the one that listens carries the connection")
    func pastRefusals() throws {
        let loop = try EventLoop()
        var accepted: [Socket] = []
        let listener = try SocketListener(loop: loop) { accepted.append($0) }
        let refusedPort = try closedPort(loop)
        let refusing = try #require(SocketAddress(ipAddress: "127.0.0.1", port: refusedPort))
        let alsoRefusing = try #require(SocketAddress(ipAddress: "::1", port: refusedPort))
        let listening = try #require(SocketAddress(ipAddress: "127.0.0.1", port: listener.port))
        var reports: [String] = []
        var connected: Result<Socket, TransportError>?
        SocketConnector(
            loop: loop, addresses: [refusing, alsoRefusing, listening], timeout: 5, attemptDelay: 5,
            report: { reports.append("\($0) \($1)") }
        ) { connected = $0 }.start()
        spin(loop) { connected != nil && accepted.count == 1 }
        let socket = try #require(try connected?.get())
        #expect(socket.peerAddress()?.port == listener.port)
        #expect(
            reports == ["\(refusing) failed", "\(alsoRefusing) failed", "\(listening) connected"],
            "a 5 s head start, yet each refusal dials the next at once")
        #expect(loop.registeredCount == 1, "only the listener is registered")
        listener.close()
    }

    @Test("every address refusing: one error naming each, of the last one's kind")
    func allRefuse() throws {
        let loop = try EventLoop()
        let port = try closedPort(loop)
        let first = try #require(SocketAddress(ipAddress: "127.0.0.1", port: port))
        let second = try #require(SocketAddress(ipAddress: "127.0.0.2", port: port))
        var result: Result<Socket, TransportError>?
        SocketConnector(loop: loop, addresses: [first, second], timeout: 5) { result = $0 }.start()
        spin(loop) { result != nil }
        guard case .failure(let error) = result else {
            Issue.record("connected to a closed port")
            return
        }
        #expect(error.kind == .connectionRefused)
        #expect(
            error.detail.contains("connect to \(first)") && error.detail.contains("connect to \(second)"), "\(error)")
        #expect(loop.registeredCount == 0)
    }

    @Test("cancelled: every socket closed, nothing reported")
    func cancelled() throws {
        let loop = try EventLoop()
        let listener = try SocketListener(loop: loop) { _ in }
        let address = try #require(SocketAddress(ipAddress: "127.0.0.1", port: listener.port))
        var reports = 0
        var called = false
        let connector = SocketConnector(loop: loop, addresses: [address], timeout: 5, report: { _, _ in reports += 1 })
        {
            _ in called = true
        }
        connector.start()
        connector.cancel()
        for _ in 0..<5 { loop.runOnce(timeout: 0.01) }
        #expect(!called)
        #expect(reports == 0)
        #expect(loop.registeredCount == 1, "only the listener is registered")
        listener.close()
    }
}
