import Foundation
import Glibc
import Synchronization
import Testing

@testable import APNSTransport

/// A tiny HTTP CONNECT proxy on 127.0.0.1:0 with blocking sockets on its own thread: accepts connections one at
/// a time, records each request, optionally demands `Proxy-Authorization`, connects to the target and pumps
/// bytes both ways until either side closes.
private final class BlockingConnectProxy: Sendable {
    let port: Int
    let requests = Mutex<[String]>([])
    private let listenFD: Int32
    private let requiredAuthorization: String?

    init(requiredAuthorization: String? = nil) throws {
        self.requiredAuthorization = requiredAuthorization
        listenFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let fd = listenFD
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw TransportError.system("proxy bind/listen", errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in self.acceptLoop() }.start()
    }

    /// Stops accepting (wakes the blocked accept).
    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
    }

    deinit {
        close(listenFD)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { return }
            serve(client)
            close(client)
        }
    }

    private func serve(_ client: Int32) {
        var request: [UInt8] = []
        var byte: UInt8 = 0
        while request.count < 8192, !request.suffix(4).elementsEqual("\r\n\r\n".utf8) {
            guard recv(client, &byte, 1, 0) == 1 else { return }
            request.append(byte)
        }
        let text = String(decoding: request, as: UTF8.self)
        requests.withLock { $0.append(text) }
        if let requiredAuthorization, !text.contains("\r\nProxy-Authorization: \(requiredAuthorization)\r\n") {
            sendAll(
                client,
                "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n\r\n"
            )
            return
        }
        // "CONNECT host:port HTTP/1.1": only loopback targets are served.
        let target = text.split(separator: " ").dropFirst().first ?? ""
        guard let colon = target.lastIndex(of: ":"), let port = UInt16(target[target.index(after: colon)...]) else {
            sendAll(client, "HTTP/1.1 400 Bad Request\r\n\r\n")
            return
        }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            sendAll(client, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
            return
        }
        sendAll(client, "HTTP/1.1 200 Connection established\r\nVia: 1.1 test-proxy\r\n\r\n")
        pump(client, upstream)
    }

    private func pump(_ a: Int32, _ b: Int32) {
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            guard poll(&fds, 2, 100) >= 0 else { return }
            for (from, to) in [(0, 1), (1, 0)] where fds[from].revents != 0 {
                let count = recv(fds[from].fd, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                var sent = 0
                while sent < count {
                    let written = buffer[sent..<count].withUnsafeBytes {
                        send(fds[to].fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                    guard written > 0 else { return }
                    sent += written
                }
            }
        }
    }

    private func sendAll(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}

@Suite("Proxy CONNECT tunnel")
struct ProxyTunnelTests {
    /// A tunnel over one end of a socketpair; the test plays the proxy on the other end.
    private func tunnel(loop: EventLoop, proxy: ProxyConfiguration = ProxyConfiguration(host: "proxy", port: 3128))
        throws -> (ProxyTunnel, Socket, () -> Result<Socket, TransportError>?)
    {
        let (ours, theirs) = try Socket.pair()
        var result: Result<Socket, TransportError>?
        let tunnel = ProxyTunnel(
            loop: loop, socket: ours, proxy: proxy, host: "api.push.apple.com", port: 443,
            timeout: 5
        ) { result = $0 }
        tunnel.start()
        return (tunnel, theirs, { result })
    }

    private func read(_ socket: Socket, loop: EventLoop, count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        spin(loop, seconds: 5) {
            if case .transferred(let n) = socket.receive(into: &buffer) {
                received += buffer[..<n]
            }
            return received.count >= count
        }
        return received
    }

    @Test("the tunnel sends CONNECT, takes exactly the answer's header in pieces, and leaves the stream intact")
    func exactConsumption() throws {
        let loop = try EventLoop()
        let (_, proxySide, result) = try tunnel(loop: loop)
        let expected = Array("CONNECT api.push.apple.com:443 HTTP/1.1\r\nHost: api.push.apple.com:443\r\n\r\n".utf8)
        #expect(read(proxySide, loop: loop, count: expected.count) == expected)
        for piece in ["HTTP/1.1 200 Conn", "ection established\r\nVia: x\r", "\n\r\nSTREAM-BYTES"] {
            _ = proxySide.send(Array(piece.utf8).span.bytes)
            loop.runOnce(timeout: 0.05)
        }
        spin(loop) { result() != nil }
        let socket = try #require(try result()?.get())
        #expect(loop.registeredCount == 0)
        #expect(read(socket, loop: loop, count: 12) == Array("STREAM-BYTES".utf8))
    }

    @Test(
        "refusals, garbage and early close fail with the proxy's words",
        arguments: [
            ("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", "proxy refused the CONNECT request", "407"),
            ("HTTP/1.1 403 Forbidden\r\n\r\n", "proxy refused the CONNECT request", "403 Forbidden"),
            ("SSH-2.0-OpenSSH_9.2\r\n", "proxy sent an invalid response", "not an HTTP response"),
            ("", "proxy sent an invalid response", "closed the connection before answering"),
        ])
    func failures(answer: String, kind: String, detail: String) throws {
        let loop = try EventLoop()
        let (_, proxySide, result) = try tunnel(loop: loop)
        _ = read(proxySide, loop: loop, count: 1)
        if answer.isEmpty { proxySide.close() } else { _ = proxySide.send(Array(answer.utf8).span.bytes) }
        spin(loop) { result() != nil }
        guard case .failure(let error) = result() else {
            Issue.record("tunnel opened on \(answer.debugDescription)")
            return
        }
        #expect(error.kind.description == kind)
        #expect(error.detail.contains(detail), "\(error)")
        #expect(loop.registeredCount == 0)
    }

    @Test("a proxy that never answers times out")
    func timeout() throws {
        let loop = try EventLoop()
        let (ours, theirs) = try Socket.pair()
        var result: Result<Socket, TransportError>?
        ProxyTunnel(
            loop: loop, socket: ours, proxy: ProxyConfiguration(host: "p", port: 1), host: "h", port: 1,
            timeout: 0.2
        ) { result = $0 }.start()
        spin(loop) { result != nil }
        guard case .failure(let error) = result else {
            Issue.record("no timeout")
            return
        }
        #expect(error.kind == .timeout)
        theirs.close()
    }

    @Test("TLS with ALPN h2 through a real CONNECT proxy with Basic credentials, data both ways")
    func tlsThroughProxy() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext(), echo: true)
        let proxy = try BlockingConnectProxy(requiredAuthorization: "Basic dXNlcjpwQHNz")
        defer { proxy.stop() }
        let recorder = TLSRecorder()
        let configuration = try ProxyConfiguration(parsing: "http://user:p%40ss@127.0.0.1:\(proxy.port)")
        let client = TLSConnection.connect(
            host: "localhost", port: server.port, proxy: configuration,
            context: try TLSFixtures.clientContext(), loop: loop, delegate: recorder)
        let data = (0..<(256 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        client.write(data)
        spin(loop, seconds: 30) { recorder.received.count >= data.count || recorder.closed }
        #expect(recorder.info?.applicationProtocol == "h2")
        #expect(recorder.received == data)
        #expect(server.first?.received == data)
        #expect(
            proxy.requests.withLock { $0 } == [
                "CONNECT localhost:\(server.port) HTTP/1.1\r\nHost: localhost:\(server.port)\r\n"
                    + "Proxy-Authorization: Basic dXNlcjpwQHNz\r\n\r\n"
            ])
        client.close()
        server.close()
    }

    @Test(
        "--resolve pins the proxy's addresses (a name that does not resolve; the first address refuses); the endpoint's name goes to the proxy"
    )
    func pinnedProxyAddresses() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext(), echo: true)
        let proxy = try BlockingConnectProxy()
        defer { proxy.stop() }
        let recorder = TLSRecorder()
        let overrides = try ResolveOverrides([
            ResolveOverride(parsing: "proxy.invalid:\(proxy.port):127.0.0.2,127.0.0.1")
        ])
        let client = TLSConnection.connect(
            host: "localhost", port: server.port, proxy: ProxyConfiguration(host: "proxy.invalid", port: proxy.port),
            context: try TLSFixtures.clientContext(), loop: loop, dialing: DialPlan(overrides: overrides),
            delegate: recorder)
        client.write([1, 2, 3])
        spin(loop, seconds: 30) { recorder.received.count >= 3 || recorder.closed }
        #expect(recorder.info?.applicationProtocol == "h2")
        #expect(recorder.received == [1, 2, 3])
        #expect(
            proxy.requests.withLock { $0 } == [
                "CONNECT localhost:\(server.port) HTTP/1.1\r\nHost: localhost:\(server.port)\r\n\r\n"
            ])
        client.close()
        server.close()
    }

    @Test("a proxy demanding credentials refuses a client without them (407)")
    func proxyWantsCredentials() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let proxy = try BlockingConnectProxy(requiredAuthorization: "Basic dXNlcjpwQHNz")
        defer { proxy.stop() }
        let recorder = TLSRecorder()
        _ = TLSConnection.connect(
            host: "localhost", port: server.port,
            proxy: ProxyConfiguration(host: "127.0.0.1", port: proxy.port),
            context: try TLSFixtures.clientContext(), loop: loop, delegate: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info == nil)
        #expect(recorder.closeError?.kind == .proxyRefused)
        #expect(recorder.closeError?.detail.contains("407") == true)
        #expect(recorder.closeError?.detail.contains("wants credentials") == true)
        #expect(server.recorders.isEmpty)  // never reached the server
        server.close()
    }
}
