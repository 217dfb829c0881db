import Testing

@testable import APNSTransport

/// TLS session resumption: a client context remembers the session of a connection that passed every check, and its
/// next connections resume it (no certificate parsed or verified again: the cost of a reconnect after a dropped
/// connection), while a connection refused for its pins or its certificate leaves nothing to resume.
@Suite("TLS session resumption")
struct TLSResumptionTests {
    /// Connects with `context`, waits for the handshake's end, then lets the server's session tickets arrive.
    private func connect(_ loop: EventLoop, _ server: TLSTestServer, _ context: TLSClientContext) throws
        -> (TLSRecorder, TLSConnection?)
    {
        let recorder = TLSRecorder()
        let client = try connectClient(loop: loop, port: server.port, context: context, recorder: recorder)
        spin(loop) { recorder.isDone }
        spin(loop, seconds: 0.3) { false }
        return (recorder, client)
    }

    @Test(
        "the second connection resumes the first's session, pins checked when it was made",
        arguments: [
            "1.3", "1.2",
        ])
    func resumes(version: String) throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(
            loop: loop,
            context: try TLSFixtures.serverContext {
                if version == "1.2" { $0.handshake.maximumVersion = .tls1_2 }
            })
        let context = try TLSFixtures.clientContext { $0.pinnedSPKISHA256 = [try TLSFixtures.pin("root-ca")] }
        let (first, firstClient) = try connect(loop, server, context)
        let (second, secondClient) = try connect(loop, server, context)
        #expect(first.closeError == nil && second.closeError == nil)
        #expect(first.info?.resumed == false)
        #expect(second.info?.resumed == true, "TLS \(version): a full handshake again")
        #expect(second.info?.protocolVersion == "TLSv\(version)")
        #expect(second.info?.peerCertificate?.subject == first.info?.peerCertificate?.subject)
        firstClient?.abort()
        secondClient?.abort()
        server.close()
    }

    @Test("a connection refused for its pins leaves no session to resume: the next is refused too")
    func refusedLeavesNothing() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let context = try TLSFixtures.clientContext { $0.pinnedSPKISHA256 = [try TLSFixtures.pin("other-ca")] }
        for _ in 0..<2 {
            let (refused, _) = try connect(loop, server, context)
            #expect(refused.info == nil)
            #expect(refused.closeError?.kind == .pinMismatch)
        }
        server.close()
    }

    @Test("sessions belong to their client context: another context does a full handshake")
    func perContext() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(loop: loop, context: try TLSFixtures.serverContext())
        let (first, firstClient) = try connect(loop, server, try TLSFixtures.clientContext())
        let (other, otherClient) = try connect(loop, server, try TLSFixtures.clientContext())
        #expect(first.info?.resumed == false && other.info?.resumed == false)
        firstClient?.abort()
        otherClient?.abort()
        server.close()
    }
}
