import APNSCrypto
import Testing

@testable import APNSTransport

@Suite("TLS client certificates")
struct TLSClientCertificateTests {
    private func requireClientCertificates(_ policy: TLSClientCertificatePolicy) throws -> TLSServerContext {
        try TLSFixtures.serverContext { $0.clientCertificates = policy }
    }

    @Test(
        "a server requiring a client certificate sees its subject, UID, pin and extensions",
        arguments: [
            TLSFixtures.clientIdentity,
            TLSIdentity.pkcs12File(path: TLSFixtures.path("client.p12"), password: "apns-test"),
            TLSIdentity.pkcs12File(path: TLSFixtures.path("client-legacy.p12"), password: "apns-test"),
        ])
    func presented(identity: TLSIdentity) throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(
            loop: loop, context: try requireClientCertificates(.required(trustRoots: TLSFixtures.rootCA)))
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.identity = identity }
        let client = TLSConnection.connect(
            host: "127.0.0.1", port: server.port, context: context, loop: loop,
            delegate: recorder)
        spin(loop) { recorder.isDone && server.first?.isDone == true }
        #expect(recorder.info?.applicationProtocol == "h2")
        let info = try #require(server.first?.info)
        let certificate = try #require(info.peerCertificate)
        #expect(certificate.subjectUserID == "com.example.app")
        #expect(certificate.subjectCommonName?.hasPrefix("Apple Push Services: com.example.app") == true)
        #expect(certificate.subject.contains("UID=com.example.app"))
        #expect(certificate.issuer.contains("Intermediate"))
        #expect(certificate.spkiSHA256Base64 == (try TLSFixtures.pin("client")))
        #expect(try SPKIPin.sha256Base64(certificateDER: certificate.der) == certificate.spkiSHA256Base64)
        #expect(
            certificate.extensions["2.5.29.37"] == [
                0x30, 0x0a, 0x06, 0x08, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02,
            ])
        // The intermediate came along in the chain (PEM chain file and both PKCS#12 files carry it).
        #expect(info.peerCertificates.map(\.spkiSHA256Base64).contains(try TLSFixtures.pin("intermediate-ca")))
        client.abort()
        server.close()
    }

    @Test("without a client certificate the handshake fails on both sides")
    func missing() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(
            loop: loop, context: try requireClientCertificates(.required(trustRoots: TLSFixtures.rootCA)))
        let recorder = TLSRecorder()
        _ = TLSConnection.connect(
            host: "127.0.0.1", port: server.port, context: try TLSFixtures.clientContext(),
            loop: loop, delegate: recorder)
        spin(loop) { recorder.closed && server.first?.closed == true }
        #expect(server.first?.info == nil)
        #expect(server.first?.closeError?.kind == .handshakeFailed)
        #expect(server.first?.closeError?.detail.contains("certificate") == true)
        // TLS 1.3 clients finish their side first; the server's alert then ends the connection.
        let error = try #require(recorder.closeError)
        #expect(error.kind == .clientCertificateRejected)
        #expect(error.detail.contains("certificate required"))
        #expect(!error.isRetryable)
        server.close()
    }

    @Test("a client certificate from an unrelated CA is refused")
    func untrusted() throws {
        let loop = try EventLoop()
        let otherCA = TLSTrustRoots.pemFile(path: TLSFixtures.path("other-ca.pem"))
        let server = try TLSTestServer(
            loop: loop, context: try requireClientCertificates(.required(trustRoots: otherCA)))
        let recorder = TLSRecorder()
        let context = try TLSFixtures.clientContext { $0.identity = TLSFixtures.clientIdentity }
        _ = TLSConnection.connect(
            host: "127.0.0.1", port: server.port, context: context, loop: loop, delegate: recorder)
        spin(loop) { recorder.closed && server.first?.closed == true }
        #expect(server.first?.info == nil)
        #expect(server.first?.closeError?.kind == .certificateVerifyFailed)
        #expect(recorder.closeError?.kind == .clientCertificateRejected)
        #expect(recorder.closeError?.detail.contains("unknown ca") == true)
        server.close()
    }

    @Test("an optional client certificate: clients with and without one are accepted")
    func optional() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(
            loop: loop, context: try requireClientCertificates(.optional(trustRoots: TLSFixtures.rootCA)))
        let anonymous = TLSRecorder()
        let identified = TLSRecorder()
        let first = TLSConnection.connect(
            host: "127.0.0.1", port: server.port, context: try TLSFixtures.clientContext(),
            loop: loop, delegate: anonymous)
        spin(loop) { server.first?.isDone == true }
        let second = TLSConnection.connect(
            host: "127.0.0.1", port: server.port,
            context: try TLSFixtures.clientContext { $0.identity = TLSFixtures.clientIdentity },
            loop: loop, delegate: identified)
        spin(loop) { server.recorders.count == 2 && server.recorders[1].isDone }
        #expect(server.recorders.count == 2)
        #expect(server.recorders.first?.info?.peerCertificate == nil)
        #expect(server.recorders.last?.info?.peerCertificate?.subjectUserID == "com.example.app")
        #expect(anonymous.closeError == nil && identified.closeError == nil)
        first.abort()
        second.abort()
        server.close()
    }
}
