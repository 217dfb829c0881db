import APNSCore
import APNSHTTP2
import Foundation
import Testing

@testable import APNSTransport

/// The pool at the transport's edges: handshakes a server refuses, a server that never speaks HTTP/2, one request
/// that never gets an answer, and a connection running out of stream ids. Real sockets and TLS on loopback; the
/// tests that hang on timeouts run their loop on a manual clock (`EventLoop(clock: .manual)`), so seconds of
/// timeouts pass in milliseconds and "at once" means "before the clock moved".
@Suite("pool edges")
struct PoolEdgeTests {
    /// Runs a pool against a server on `port` until it gives up; returns the error and how long it took on the
    /// loop's clock (none on a manual clock that was never moved).
    private func failure(
        port: Int, loop: EventLoop, _ change: (inout APNSClientConfiguration) -> Void = { _ in }
    ) throws -> (TransportError, Double) {
        var configuration = PoolProbe.configuration(port: port)
        change(&configuration)
        let probe = try PoolProbe(configuration, loop: loop, count: 3)
        probe.run(seconds: 15)
        probe.close()
        let error = try #require(probe.failure as? TransportError, "the pool did not give up")
        return (error, probe.failedAfter ?? .infinity)
    }

    @Test("a server offering only a non-AEAD cipher suite: the pool fails at once, naming the cause")
    func noSharedCipher() throws {
        let loop = try EventLoop(clock: .manual(.now()))
        let server = try TLSTestServer(
            loop: loop,
            context: try TLSFixtures.serverContext {
                $0.identity = .pemFiles(
                    certificateChainPath: TLSFixtures.path("server-rsa-chain.pem"),
                    privateKeyPath: TLSFixtures.path("server-rsa.key"))
                $0.handshake.maximumVersion = .tls1_2
                $0.handshake.cipherList = "ECDHE-RSA-AES128-SHA256"
            })
        defer { server.close() }
        let (error, seconds) = try failure(port: server.port, loop: loop)
        #expect(error.kind == .handshakeRefused, "\(error)")
        #expect(error.description.contains("no cipher suite in common"), "\(error)")
        #expect(error.description.contains("handshake failure"), "\(error)")
        #expect(seconds == 0, "gave up after \(seconds) s on the loop's clock")
    }

    @Test("a server speaking only TLS 1.1: the pool fails at once, naming the cause")
    func tlsVersionTooOld() throws {
        try #require(toolExists("openssl"))
        let loop = try EventLoop(clock: .manual(.now()))
        let run = try ToolRun(
            [
                "openssl", "s_server", "-accept", "127.0.0.1:0", "-naccept", "1", "-tls1_1", "-cipher",
                "DEFAULT:@SECLEVEL=0",
                "-cert", TLSFixtures.path("server.pem"), "-key", TLSFixtures.path("server.key"),
                "-cert_chain", TLSFixtures.path("intermediate-ca.pem"),
            ], keepInputOpen: true)
        defer { run.stop() }
        var port: Int?
        spin(loop, seconds: 10) {
            port = run.output.split(separator: "\n").first { $0.hasPrefix("ACCEPT 127.0.0.1:") }
                .flatMap { Int($0.dropFirst("ACCEPT 127.0.0.1:".count)) }
            return port != nil
        }
        let (error, seconds) = try failure(port: try #require(port, "\(run.output)"), loop: loop)
        #expect(error.kind == .handshakeRefused, "\(error)")
        #expect(error.description.contains("no TLS version in common"), "\(error)")
        #expect(error.description.contains("protocol version"), "\(error)")
        #expect(seconds == 0, "gave up after \(seconds) s on the loop's clock")
    }

    @Test("a client certificate the server does not trust (TLS 1.3 alert after the handshake): the pool fails at once")
    func clientCertificateFromAnotherCA() throws {
        let loop = try EventLoop(clock: .manual(.now()))
        let server = try TLSTestServer(
            loop: loop,
            context: try TLSFixtures.serverContext {
                $0.clientCertificates = .required(trustRoots: .pemFile(path: TLSFixtures.path("other-ca.pem")))
            })
        defer { server.close() }
        let (error, seconds) = try failure(port: server.port, loop: loop) {
            $0.tls.identity = TLSFixtures.clientIdentity
        }
        #expect(error.kind == .clientCertificateRejected, "\(error)")
        #expect(error.description.contains("unknown ca"), "\(error)")
        #expect(seconds == 0, "gave up after \(seconds) s on the loop's clock")
        #expect(server.connections.count == 1, "\(server.connections.count) connection attempts")
    }

    @Test("a server that accepts TLS and h2 but closes before its SETTINGS: pending requests come back not sent")
    func closedBeforeSettings() throws {
        let loop = try EventLoop()
        let server = try H2TestServer(loop: loop, context: try TLSFixtures.serverContext())
        server.closeBeforeSettings = true
        defer { server.close() }
        let probe = try PoolProbe(PoolProbe.configuration(port: server.port), loop: loop, count: 1)
        probe.run(seconds: 10) { probe.outcomes[1] != nil }
        probe.close()
        #expect(server.bytesBeforeClose > 0, "the request never reached the server")
        let outcome = try #require(probe.outcomes[1])
        guard case .failed(.notSent) = outcome else {
            Issue.record("a request the server cannot have processed ended \(outcome)")
            return
        }
        #expect(OutcomePolicy.action(for: outcome) == .retry(.immediately))
    }

    @Test("a request unanswered past the timeout is cancelled alone; the connection and its other requests carry on")
    func perRequestTimeout() throws {
        let loop = try EventLoop(clock: .manual(.now()))
        let server = try H2TestServer(loop: loop, context: try TLSFixtures.serverContext())
        defer { server.close() }
        var resets: [(Int32, HTTP2ErrorCode)] = []
        server.onStreamClosed = { resets.append(($0, $1)) }
        server.answer = { request, session in
            guard request.streamID != 1 else { return }  // the first request never gets an answer
            try? session.respond(to: request.streamID, status: 200)
        }
        var configuration = PoolProbe.configuration(port: server.port)
        configuration.requestTimeout = 1
        let probe = try PoolProbe(configuration, loop: loop, count: 6)
        probe.run(seconds: 8) { probe.outcomes.count == 5 }
        #expect(probe.outcomes.count == 5 && probe.outcomes[1] == nil, "before the timeout: the other five answered")
        probe.advance(virtualSeconds: 3) { probe.outcomes.count == 6 }
        // The connection is still the first one, and it still works after the cancel.
        probe.advance(virtualSeconds: 0.5)
        #expect(probe.pool.readyConnectionCount == 1)
        #expect(server.connections.count == 1, "the connection was replaced")
        probe.close()
        #expect(probe.outcomes.count == 6)
        guard case .failed(.answerLost(let why))? = probe.outcomes[1] else {
            Issue.record("the unanswered request ended \(String(describing: probe.outcomes[1]))")
            return
        }
        #expect(why.contains("no answer within 1s"))
        for tag in 2...6 { #expect(probe.outcomes[UInt64(tag)]?.answer?.status == 200) }
        #expect(resets.contains { $0.0 == 1 && $0.1 == .cancel }, "no RST_STREAM CANCEL for stream 1: \(resets)")
    }

    @Test("after a request timeout the connection gets no new requests until it proves alive; a silent one is dropped")
    func noNewRequestsOnSuspectConnection() throws {
        let loop = try EventLoop(clock: .manual(.now()))
        let server = try H2TestServer(loop: loop, context: try TLSFixtures.serverContext())
        server.maxConcurrentStreams = 2
        server.muteAfterRequests = 1
        defer { server.close() }
        var configuration = PoolProbe.configuration(port: server.port)
        configuration.requestTimeout = 1
        configuration.pingTimeout = 1
        let probe = try PoolProbe(configuration, loop: loop, count: 6)
        probe.run(seconds: 10) { server.requests == 2 }
        probe.advance(virtualSeconds: 20) { server.connections.count >= 2 }
        probe.close()
        let first = try #require(server.connections.first)
        // Two streams were open when both timed out; nothing more went to the silent connection.
        #expect(first.requests == 2, "\(first.requests) requests sent to a connection that had stopped answering")
        #expect(server.connections.count >= 2, "the silent connection was never replaced")
        for tag: UInt64 in [1, 2] {
            guard case .failed(.answerLost)? = probe.outcomes[tag] else {
                Issue.record("tag \(tag) ended \(String(describing: probe.outcomes[tag]))")
                continue
            }
        }
    }

    @Test(
        "close(gracePeriod:) with requests unanswered: after the grace period they end in doubt, then the pool reports closed"
    )
    func gracePeriodExpires() throws {
        let loop = try EventLoop(clock: .manual(.now()))
        let server = try H2TestServer(loop: loop, context: try TLSFixtures.serverContext())
        defer { server.close() }
        server.answer = { request, session in
            guard request.streamID > 3 else { return }  // the first two requests never get an answer
            try? session.respond(to: request.streamID, status: 200)
        }
        let probe = try PoolProbe(PoolProbe.configuration(port: server.port), loop: loop, count: 4)
        probe.run(seconds: 8) { probe.outcomes.count == 2 && server.requests == 4 }
        #expect(probe.outcomes.count == 2)
        probe.pool.close(gracePeriod: 0.5)
        #expect(probe.pool.freeSlots == 0)
        probe.advance(virtualSeconds: 0.25, step: 0.25)
        #expect(!probe.closed, "closed before the grace period ended")
        #expect(probe.outcomes[1] == nil && probe.outcomes[2] == nil, "ended before the grace period did")
        probe.advance(virtualSeconds: 2) { probe.closed }
        #expect(probe.closed, "the pool never reported closed")
        for tag: UInt64 in [1, 2] {
            guard case .failed(.answerLost)? = probe.outcomes[tag] else {
                Issue.record("tag \(tag) ended \(String(describing: probe.outcomes[tag]))")
                continue
            }
        }
        #expect(probe.pool.readyConnectionCount == 0)
    }

    @Test("a connection nearing the end of its stream ids drains and is replaced; nothing is lost or in doubt")
    func streamIDsRunOut() throws {
        let loop = try EventLoop()
        let server = try H2TestServer(loop: loop, context: try TLSFixtures.serverContext())
        defer { server.close() }
        var configuration = PoolProbe.configuration(port: server.port)
        configuration.lastStreamID = 7  // four requests per connection: streams 1, 3, 5, 7
        let probe = try PoolProbe(configuration, loop: loop, count: 20)
        probe.run(seconds: 15) { probe.outcomes.count == 20 }
        probe.close()
        #expect(probe.failure == nil)
        #expect(probe.outcomes.count == 20)
        #expect(probe.outcomes.values.allSatisfy { $0.answer?.status == 200 })
        #expect(server.connections.count >= 5, "\(server.connections.count) connections for 20 requests")
        #expect(server.requests == 20)
    }

    @Test("a write failing in the pool's flush ends its connection at once: later requests are refused, not in doubt")
    func failedFlushEndsConnectionAtOnce() throws {
        let loop = try EventLoop()
        let server = try H2TestServer(loop: loop, context: try TLSFixtures.serverContext())
        defer { server.close() }
        let probe = try PoolProbe(PoolProbe.configuration(port: server.port), loop: loop, count: 1)
        probe.run(seconds: 15) { probe.outcomes.count == 1 }
        #expect(probe.outcomes[1]?.answer?.status == 200, "the server answered: requests it may hold are in doubt")
        server.connections.first?.tls?.abort()  // the peer's socket is gone: a write draws a reset, a later one fails
        // The loop does not run from here on: only this code's writes meet the reset, and every report that waits
        // for the next loop turn (the TLS close) waits. Without the close reaching the connection at once, every
        // request below would go into the closed transport and come back in doubt.
        var lastTag: UInt64 = 1
        for notification in PoolProbe.notifications(200) {
            lastTag += 1
            probe.pool.submit(notification, tag: lastTag)
            probe.pool.flush()
            if probe.pool.readyConnectionCount == 0 { break }  // the failed write ended the connection
            usleep(5_000)
        }
        #expect(probe.pool.readyConnectionCount == 0, "no write failed in \(lastTag - 1) flushes")
        let refused = lastTag + 1
        probe.pool.submit(PoolProbe.notifications(1)[0], tag: refused)
        spin(loop, seconds: 5) { probe.outcomes.count == Int(refused) }
        probe.close()
        #expect(probe.outcomes.count == Int(refused), "every tag reported")
        guard case .failed(.notSent) = probe.outcomes[refused] else {
            Issue.record("the request after the failed flush: \(String(describing: probe.outcomes[refused]))")
            return
        }
        // The requests that went into the failing writes are in doubt (their bytes may have left), none reported
        // twice (the probe checks), none lost.
        let inDoubt = probe.outcomes.values.filter { if case .failed(.answerLost) = $0 { true } else { false } }
        #expect(inDoubt.count == Int(lastTag) - 1)
    }
}

/// Client-session edges on the in-memory pair: cancelling one request, and a connection that ends before the
/// server's SETTINGS.
@Suite("HTTP/2 client session edges")
struct HTTP2ClientSessionEdgeTests {
    private func submit(_ pair: InMemoryHTTP2Pair, tag: UInt64) throws -> Int32 {
        var fields = HTTP2HeaderFieldList()
        APNSLikeTraffic.fill(&fields, tag: tag)
        return try pair.client.submitRequest(
            block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: tag)
    }

    @Test("cancelling one stream resets it with CANCEL, never reports its tag, and leaves the others alone")
    func cancelOne() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 10))
        pair.interact()
        var requests: [Int32] = []
        pair.onServerEvent = { event in
            if case .request(let request) = event { requests.append(request.streamID) }
        }
        let first = try submit(pair, tag: 1)
        let second = try submit(pair, tag: 2)
        pair.interact()
        #expect(requests == [first, second])
        #expect(pair.client.cancelRequest(streamID: first) == true)
        #expect(pair.client.cancelRequest(streamID: first) == nil, "a second cancel of the same stream")
        pair.interact()
        #expect(
            pair.serverEvents.contains {
                if case .streamClosed(first, .cancel) = $0 { return true } else { return false }
            })
        try pair.server.respond(to: second, status: 200)
        pair.interact()
        #expect(pair.clientRecords.compactMap(\.terminalTag) == [2])
        #expect(pair.client.openStreamCount == 0)
    }

    @Test("requests sent on a connection that ends before the server's SETTINGS are not sent, not in doubt")
    func closedBeforeServerSettings() throws {
        let pair = try InMemoryHTTP2Pair()
        _ = try submit(pair, tag: 1)
        var output: [UInt8] = []
        pair.client.produceOutput(into: &output)  // the preface and the request's HEADERS leave; nothing comes back
        #expect(!output.isEmpty)
        pair.client.connectionClosed()
        pair.drainClient()
        #expect(pair.clientRecords == [.failed(tag: 1, streamID: 1, failure: .connectionEndedBeforeSending)])
    }

    @Test("a session takes no new streams once the next stream id would pass lastStreamID")
    func lastStreamID() throws {
        let pair = try InMemoryHTTP2Pair(
            client: HTTP2ClientConfiguration(lastStreamID: 5),
            server: HTTP2ServerConfiguration(maxConcurrentStreams: 10))
        pair.interact()
        for tag in 1...3 {
            #expect(pair.client.acceptsNewStreams)
            _ = try submit(pair, tag: UInt64(tag))
        }
        #expect(!pair.client.acceptsNewStreams)
        #expect(pair.client.availableStreamSlots == 0)
        #expect(throws: HTTP2Error.sessionClosing) { try submit(pair, tag: 4) }
    }
}
