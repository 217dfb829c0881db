import Testing
@testable import APNSTransport

/// A client connection over a socket connected to 127.0.0.1:`port`, verifying `serverName`.
private func connectClient(loop: EventLoop, port: Int, serverName: String = "localhost",
                           context: TLSClientContext, recorder: TLSRecorder) throws -> TLSConnection? {
    var connected: Result<Socket, TransportError>?
    let address = try #require(SocketAddress(ipAddress: "127.0.0.1", port: port))
    SocketConnector(loop: loop, addresses: [address], timeout: 5) { connected = $0 }.start()
    spin(loop) { connected != nil }
    let socket = try #require(try connected?.get())
    return try TLSConnection(clientSocket: socket, serverName: serverName, context: context, loop: loop,
                             delegate: recorder)
}

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
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext(), echo: true)
        let recorder = TLSRecorder()
        let client = try #require(try connectClient(loop: loop, port: server.port,
                                                    context: try TLSFixtures.clientContext(), recorder: recorder))
        let data = payload(4 << 20, seed: 7)
        client.write(data)  // queued before the handshake: goes out right after it
        #expect(client.state == .handshaking)
        spin(loop, seconds: 60) { recorder.received.count >= data.count || recorder.closed }

        let info = try #require(recorder.info)
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
        let client = TLSConnection.connect(host: "localhost", port: server.port,
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
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext { $0.maximumVersion = .tls1_2 })
        let recorder = TLSRecorder()
        let client = try connectClient(loop: loop, port: server.port, context: try TLSFixtures.clientContext(),
                                       recorder: recorder)
        spin(loop) { recorder.isDone }
        let info = try #require(recorder.info)
        #expect(info.protocolVersion == "TLSv1.2")
        #expect(TLSClientConfiguration.forwardSecretCipherList.split(separator: ":").contains(Substring(info.cipherSuite)))
        #expect(info.cipherSuite.hasPrefix("ECDHE-ECDSA-"))
        client?.abort()
        server.close()
    }

    @Test("a TLS 1.2 server offering only RSA key exchange (no forward secrecy) is refused")
    func noForwardSecrecy() throws {
        let loop = try EventLoop()
        let rsaOnly = try TLSFixtures.serverContext {
            $0.identity = .pemFiles(certificateChainPath: TLSFixtures.path("server-rsa-chain.pem"),
                                    privateKeyPath: TLSFixtures.path("server-rsa.key"))
            $0.maximumVersion = .tls1_2
            $0.cipherList = "AES128-GCM-SHA256"
        }
        let server = try TLSTestServer(loop: loop, context: rsaOnly)
        let refused = TLSRecorder()
        _ = try connectClient(loop: loop, port: server.port, context: try TLSFixtures.clientContext(), recorder: refused)
        spin(loop) { refused.isDone }
        #expect(refused.info == nil)
        #expect(refused.closeError?.kind == .handshakeFailed)

        // Control: the same server is reachable when the client allows that suite, so the policy made the difference.
        let allowed = TLSRecorder()
        let lax = try TLSFixtures.clientContext { $0.cipherList = "AES128-GCM-SHA256" }
        let client = try connectClient(loop: loop, port: server.port, context: lax, recorder: allowed)
        spin(loop) { allowed.isDone }
        #expect(allowed.info?.cipherSuite == "AES128-GCM-SHA256")
        client?.abort()
        server.close()
    }

    @Test("a server certificate from another CA fails verification with OpenSSL's reason")
    func wrongCA() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.trustRoots = .pemFile(path: TLSFixtures.path("other-ca.pem")) }
        _ = try connectClient(loop: loop, port: server.port, context: context, recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info == nil)
        let error = try #require(recorder.closeError)
        #expect(error.kind == .certificateVerifyFailed)
        #expect(error.detail.contains("unable to get local issuer certificate"))
        #expect(!error.isRetryable)
        server.close()
    }

    @Test("a certificate for another name or IP is refused", arguments: ["apns.example.invalid", "10.1.2.3", "::2"])
    func wrongHostname(serverName: String) throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let recorder = TLSRecorder()
        _ = try connectClient(loop: loop, port: server.port, serverName: serverName,
                              context: try TLSFixtures.clientContext(), recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info == nil)
        #expect(recorder.closeError?.kind == .hostnameMismatch)
        #expect(recorder.closeError?.detail.contains("mismatch") == true)
        server.close()
    }

    @Test("an IP literal the certificate names is accepted")
    func ipLiteral() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let recorder = TLSRecorder()
        let client = try connectClient(loop: loop, port: server.port, serverName: "127.0.0.1",
                                       context: try TLSFixtures.clientContext(), recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info != nil)
        #expect(recorder.closeError == nil)
        client?.abort()
        server.close()
    }

    @Test("SPKI pins: a pin on the leaf, the intermediate or the root is satisfied", arguments: [
        "server", "intermediate-ca", "root-ca",
    ])
    func pinMatch(name: String) throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let recorder = TLSRecorder()
        let pins = [try TLSFixtures.pin("other-ca"), try TLSFixtures.pin(name)]
        let context = try TLSFixtures.clientContext { $0.pinnedSPKISHA256 = pins }
        let client = try connectClient(loop: loop, port: server.port, context: context, recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info != nil)
        #expect(recorder.closeError == nil)
        client?.abort()
        server.close()
    }

    @Test("SPKI pins: no matching key refuses the connection and lists the presented pins")
    func pinMismatch() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.pinnedSPKISHA256 = [try TLSFixtures.pin("other-ca")] }
        _ = try connectClient(loop: loop, port: server.port, context: context, recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info == nil)
        let error = try #require(recorder.closeError)
        #expect(error.kind == .pinMismatch)
        for name in ["server", "intermediate-ca", "root-ca", "other-ca"] {
            #expect(error.detail.contains(try TLSFixtures.pin(name)))
        }
        #expect(!error.isRetryable)
        server.close()
    }

    @Test("a server that does not select h2 is refused with a clear ALPN error", arguments: [[], ["http/1.1"]])
    func noH2(serverProtocols: [String]) throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext {
            $0.applicationProtocols = serverProtocols
        })
        let recorder = TLSRecorder()
        _ = try connectClient(loop: loop, port: server.port, context: try TLSFixtures.clientContext(), recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info == nil)
        let error = try #require(recorder.closeError)
        #expect(error.kind == .alpnNotH2)
        #expect(error.description.contains("h2"))
        #expect(server.first?.info?.applicationProtocol == nil)
        server.close()
    }

    @Test("the server selects h2 among several offered protocols")
    func alpnSelection() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext {
            $0.applicationProtocols = ["h2", "http/1.1"]
        })
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.applicationProtocols = ["http/1.1", "h2"] }
        let client = try connectClient(loop: loop, port: server.port, context: context, recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info?.applicationProtocol == "h2")  // the server's preference wins
        client?.abort()
        server.close()
    }

    @Test("a slow or silent peer times the handshake out")
    func handshakeTimeout() throws {
        let loop = try EventLoop()
        var silent: [Socket] = []
        let listener = try SocketListener(loop: loop) { silent.append($0) }  // accepts, never answers
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.handshakeTimeout = 0.3 }
        _ = try connectClient(loop: loop, port: listener.port, context: context, recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.closeError?.kind == .timeout)
        #expect(silent.count == 1)
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
        _ = TLSConnection.connect(host: "no-such-host.invalid", port: 443, context: context, loop: loop, delegate: unknown)
        spin(loop, seconds: 20) { refused.isDone && unknown.isDone }
        #expect(refused.closeError?.kind == .connectionRefused)
        #expect(refused.closeError?.detail.contains("127.0.0.1:\(port)") == true)
        #expect(unknown.closeError?.kind == .nameResolutionFailed)
        #expect(unknown.closeError?.isRetryable == true)
        #expect(loop.registeredCount == 0)
    }
}
