import Glibc
import Testing

@testable import APNSTransport

/// A deterministic, non-repeating-looking payload.
private func payload(_ count: Int, seed: UInt32) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}

@Suite("TLS connections")
struct TLSConnectionTests {
    @Test("client and server handshake with ALPN h2 and echo 4 MiB both ways")
    func handshakeAndEcho() throws {
        let loop = try EventLoop()
        // Generous handshake timeouts: under a sanitizer, next to other tests' processes, 5 s is not always enough.
        let server = try TLSTestServer(
            loop: loop, context: try TLSFixtures.serverContext { $0.handshake.timeout = 60 }, echo: true)
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.handshake.timeout = 60 }
        let client = try #require(
            try connectClient(loop: loop, port: server.port, context: context, recorder: recorder))
        let data = payload(4 << 20, seed: 7)
        client.write(data)  // queued before the handshake: goes out right after it
        #expect(client.state == .handshaking)
        // Bounded by progress, not by the clock: under ThreadSanitizer this transfer takes close to a minute.
        let progress = {
            (recorder.info == nil ? 0 : 1) + recorder.received.count + (server.first?.received.count ?? 0)
        }
        spin(loop, idleSeconds: 60, progress: progress) { recorder.received.count >= data.count || recorder.closed }

        let info = try #require(
            recorder.info, "no handshake; closed: \(recorder.closed), \(String(describing: recorder.closeError))")
        #expect(info.applicationProtocol == "h2")
        #expect(info.protocolVersion == "TLSv1.3")
        #expect(info.peerCertificates.count == 2)  // leaf and intermediate, as the server sent them
        #expect(info.peerCertificate?.spkiSHA256Base64 == (try TLSFixtures.pin("server")))
        #expect(info.peerCertificate?.subjectCommonName?.hasPrefix("localhost") == true)
        #expect(info.peerCertificates.last?.spkiSHA256Base64 == (try TLSFixtures.pin("intermediate-ca")))
        #expect(server.first?.info?.applicationProtocol == "h2")
        #expect(server.first?.info?.peerCertificates.isEmpty == true)
        #expect(recorder.received.count == data.count)
        #expect(recorder.received == data)
        #expect(server.first?.received == data)
        #expect(!recorder.closed)
        // 4 MiB cannot all fit in loopback socket buffers while one thread writes: partial writes happened.
        #expect(recorder.drains + (server.first?.drains ?? 0) > 0)
        #expect(client.bufferedOutputCount == 0)

        // A graceful close from the server reaches the client as a clean close (close_notify).
        server.connections.first?.close()
        spin(loop) { recorder.closed }
        #expect(recorder.closed)
        #expect(recorder.closeError == nil)
        #expect(client.state == .closed)
        server.close()
        #expect(loop.registeredCount == 0)
    }

    @Test("TLSConnection.connect resolves localhost, sends SNI and verifies the name")
    func connectByName() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let recorder = TLSRecorder()
        let client = TLSConnection.connect(
            host: "localhost", port: server.port,
            context: try TLSFixtures.clientContext(), loop: loop, delegate: recorder)
        #expect(client.state == .connecting)
        #expect(!recorder.isDone)  // nothing reported from inside connect
        spin(loop) { recorder.isDone && server.first?.info != nil }
        #expect(recorder.info?.applicationProtocol == "h2")
        #expect(recorder.closeError == nil)
        client.write(Array("ping".utf8))
        client.flush()
        spin(loop) { server.first?.received.count == 4 }
        #expect(server.first?.received == Array("ping".utf8))

        // An abort (no close_notify) reaches the server as a close without close_notify.
        client.abort()
        spin(loop) { server.first?.closed == true }
        #expect(server.first?.closeError?.kind == .closedByPeer)
        server.close()
    }

    @Test("a TLS 1.2 server negotiates an ECDHE AEAD suite from the forward-secret list")
    func tls12() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(
            loop: loop, context: try TLSFixtures.serverContext { $0.handshake.maximumVersion = .tls1_2 })
        let recorder = TLSRecorder()
        let client = try connectClient(
            loop: loop, port: server.port, context: try TLSFixtures.clientContext(),
            recorder: recorder)
        spin(loop) { recorder.isDone }
        let info = try #require(recorder.info)
        #expect(info.protocolVersion == "TLSv1.2")
        #expect(
            TLSHandshakeSettings.forwardSecretCipherList.split(separator: ":").contains(Substring(info.cipherSuite)))
        #expect(info.cipherSuite.hasPrefix("ECDHE-ECDSA-"))
        client?.abort()
        server.close()
    }

    @Test("an IP literal the certificate names is accepted")
    func ipLiteral() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let recorder = TLSRecorder()
        let client = try connectClient(
            loop: loop, port: server.port, serverName: "127.0.0.1",
            context: try TLSFixtures.clientContext(), recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info != nil)
        #expect(recorder.closeError == nil)
        client?.abort()
        server.close()
    }

    @Test("the server selects h2 among several offered protocols")
    func alpnSelection() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(
            loop: loop,
            context: try TLSFixtures.serverContext {
                $0.handshake.applicationProtocols = ["h2", "http/1.1"]
            })
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.handshake.applicationProtocols = ["http/1.1", "h2"] }
        let client = try connectClient(loop: loop, port: server.port, context: context, recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info?.applicationProtocol == "h2")  // the server's preference wins
        client?.abort()
        server.close()
    }

    @Test("a write that fails inside the owner's flush is reported after it, on the next turn, once")
    func failedFlushReportedAfter() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let recorder = TLSRecorder()
        let client = try #require(
            try connectClient(
                loop: loop, port: server.port, context: try TLSFixtures.clientContext(), recorder: recorder))
        spin(loop) { recorder.isDone && server.first?.info != nil }
        #expect(recorder.events == ["handshake"])
        server.connections.first?.abort()  // the peer's socket is gone: a write draws a reset, the next one fails
        var attempts = 0
        while client.state != .closed && attempts < 200 {
            client.write(payload(1024, seed: UInt32(attempts)))
            client.flush()
            #expect(!recorder.closed, "not from inside flush")
            attempts += 1
            if client.state != .closed { usleep(5_000) }  // the loop does not run: the reset is met only by a write
        }
        #expect(client.state == .closed)
        #expect(recorder.events == ["handshake"])
        client.abort()  // the owner ending it meanwhile changes nothing: the close is still reported, once
        loop.runOnce(timeout: 0)
        #expect(recorder.events == ["handshake", "close"])
        #expect(recorder.closeError != nil)
        spin(loop, seconds: 0.2) { false }
        #expect(recorder.events == ["handshake", "close"])
        #expect(loop.registeredCount == 1)  // only the listener
        server.close()
    }

    @Test("closing or aborting from inside callbacks ends reporting at once")
    func closeFromCallbacks() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext(), echo: true)
        let aborting = TLSRecorder()
        aborting.afterReceive = { $0.abort() }
        let first = try #require(
            try connectClient(
                loop: loop, port: server.port,
                context: try TLSFixtures.clientContext(), recorder: aborting))
        first.write(payload(256 * 1024, seed: 1))  // echoed back in many records
        let closing = TLSRecorder()
        closing.afterHandshake = { connection in
            connection.write(Array("last words".utf8))
            connection.close()
        }
        let second = try #require(
            try connectClient(
                loop: loop, port: server.port,
                context: try TLSFixtures.clientContext(), recorder: closing))
        spin(loop) { server.recorders.count == 2 && server.recorders.allSatisfy(\.closed) }
        #expect(aborting.events == ["handshake", "receive"])
        #expect(first.state == .closed)
        #expect(closing.events == ["handshake"])
        #expect(second.state == .closed)
        // The graceful close still delivered what was written before it. (The echoing peer then writes into a
        // closed socket, so its own ending is a reset or a clean close depending on timing.)
        let peer = try #require(server.recorders.first { $0.received == Array("last words".utf8) })
        #expect(peer.closed)
        #expect(loop.registeredCount == 1)  // only the listener
        server.close()
    }

    @Test("a slow or silent peer times the handshake out")
    func handshakeTimeout() throws {
        let loop = try EventLoop()
        var silent: [Socket] = []
        let listener = try SocketListener(loop: loop) { silent.append($0) }  // accepts, never answers
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.handshake.timeout = 0.3 }
        _ = try connectClient(loop: loop, port: listener.port, context: context, recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.closeError?.kind == .timeout)
        #expect(silent.count == 1)
        listener.close()
    }

    @Test("IPv6 loopback: listen on ::1, connect to the literal, verify the IP in the certificate")
    func ipv6() throws {
        let loop = try EventLoop()
        let context = try TLSFixtures.serverContext()
        var connections: [TLSConnection] = []
        let serverRecorder = TLSRecorder()
        let listener = try SocketListener(loop: loop, host: "::1") { socket in
            if let connection = try? TLSConnection(
                acceptedSocket: socket, context: context, loop: loop,
                delegate: serverRecorder)
            {
                connections.append(connection)
            }
        }
        #expect(listener.address.isIPv6)
        let recorder = TLSRecorder()
        let client = TLSConnection.connect(
            host: "[::1]", port: listener.port, context: try TLSFixtures.clientContext(),
            loop: loop, delegate: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info?.applicationProtocol == "h2")
        #expect(client.serverName == "::1")
        #expect(client.remoteAddress == SocketAddress(ipAddress: "::1", port: listener.port))
        #expect(connections.first?.remoteAddress?.isIPv6 == true)
        client.abort()
        connections.forEach { $0.abort() }
        listener.close()
    }

    @Test("connect failures: refused port and unknown name")
    func connectFailures() throws {
        let loop = try EventLoop()
        let listener = try SocketListener(loop: loop) { _ in }
        let port = listener.port
        listener.close()
        let refused = TLSRecorder()
        let unknown = TLSRecorder()
        let context = try TLSFixtures.clientContext()
        _ = TLSConnection.connect(host: "127.0.0.1", port: port, context: context, loop: loop, delegate: refused)
        _ = TLSConnection.connect(
            host: "no-such-host.invalid", port: 443, context: context, loop: loop, delegate: unknown)
        spin(loop, seconds: 20) { refused.isDone && unknown.isDone }
        #expect(refused.closeError?.kind == .connectionRefused)
        #expect(refused.closeError?.detail.contains("127.0.0.1:\(port)") == true)
        #expect(unknown.closeError?.kind == .nameResolutionFailed)
        #expect(unknown.closeError?.isRetryable == true)
        #expect(loop.registeredCount == 0)
    }
}
