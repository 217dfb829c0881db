import Testing

@testable import APNSTransport

/// The client's transport security policy: what it refuses (and, as controls, what it accepts).
@Suite("TLS client policy")
struct TLSPolicyTests {
    @Test("a TLS 1.2 server offering only RSA key exchange (no forward secrecy) is refused")
    func noForwardSecrecy() throws {
        let loop = try EventLoop()
        let rsaOnly = try TLSFixtures.serverContext {
            $0.identity = .pemFiles(
                certificateChainPath: TLSFixtures.path("server-rsa-chain.pem"),
                privateKeyPath: TLSFixtures.path("server-rsa.key"))
            $0.handshake.maximumVersion = .tls1_2
            $0.handshake.cipherList = "AES128-GCM-SHA256"
        }
        let server = try TLSTestServer(loop: loop, context: rsaOnly)
        let refused = TLSRecorder()
        _ = try connectClient(
            loop: loop, port: server.port, context: try TLSFixtures.clientContext(), recorder: refused)
        spin(loop) { refused.isDone }
        #expect(refused.info == nil)
        #expect(refused.closeError?.kind == .handshakeRefused)
        #expect(refused.closeError?.isRetryable == false)

        // Control: the same server is reachable when the client allows that suite, so the policy made the difference.
        let allowed = TLSRecorder()
        let lax = try TLSFixtures.clientContext { $0.handshake.cipherList = "AES128-GCM-SHA256" }
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
        _ = try connectClient(
            loop: loop, port: server.port, serverName: serverName,
            context: try TLSFixtures.clientContext(), recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info == nil)
        #expect(recorder.closeError?.kind == .hostnameMismatch)
        #expect(recorder.closeError?.detail.contains("mismatch") == true)
        server.close()
    }

    @Test(
        "SPKI pins: a pin on the leaf, the intermediate or the root is satisfied",
        arguments: [
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
        let server = try TLSTestServer(
            loop: loop,
            context: try TLSFixtures.serverContext {
                $0.handshake.applicationProtocols = serverProtocols
            })
        let recorder = TLSRecorder()
        _ = try connectClient(
            loop: loop, port: server.port, context: try TLSFixtures.clientContext(), recorder: recorder)
        spin(loop) { recorder.isDone }
        #expect(recorder.info == nil)
        let error = try #require(recorder.closeError)
        #expect(error.kind == .alpnNotH2)
        #expect(error.description.contains("h2"))
        #expect(server.first?.info?.applicationProtocol == nil)
        server.close()
    }
}
