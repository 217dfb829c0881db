import APNSCore
import Testing

@testable import APNSTransport

/// Spares the load does not need close (`APNSClientConfiguration.closeIdleConnectionsAfter`): over real
/// connections to a test server, on a manual clock.
@Suite("connection pool idle spares")
struct PoolIdleSpareTests {
    /// A pool of `connections` to a test server on a manual clock, opened at once, `closeIdleAfter` its setting,
    /// with `count` requests to send.
    private func probe(
        connections: Int, closeIdleAfter: Double?, count: Int
    ) throws -> (PoolProbe, H2TestServer) {
        let loop = try EventLoop(clock: .manual(.now()))
        let server = try H2TestServer(loop: loop, context: try TLSFixtures.serverContext())
        var configuration = PoolProbe.configuration(port: server.port, connections: connections)
        configuration.streamsPerConnection = 10
        configuration.connectionStagger = 0
        configuration.closeIdleConnectionsAfter = closeIdleAfter
        return (try PoolProbe(configuration, loop: loop, count: count), server)
    }

    @Test("spares that carry nothing close one a check, the last first, down to the room one share needs")
    func idleSparesClose() throws {
        let (probe, server) = try probe(connections: 4, closeIdleAfter: 2, count: 8)
        defer { server.close() }
        probe.run(seconds: 10) { probe.outcomes.count == 8 && probe.pool.readyConnectionCount == 4 }
        #expect(probe.outcomes.values.allSatisfy { $0.answer?.status == 200 }, "\(probe.outcomes)")
        #expect(probe.pool.readyConnectionCount == 4 && server.connections.count == 4)
        probe.advance(virtualSeconds: 2.5)
        #expect(probe.pool.readyConnectionCount == 4, "each carried a request before the first check")
        probe.advance(virtualSeconds: 2)
        #expect(probe.pool.readyConnectionCount == 3, "one closed at the second check")
        probe.advance(virtualSeconds: 10)
        #expect(probe.pool.readyConnectionCount == 1, "nothing in flight: one connection's room is the share kept")
        #expect(server.connections.count == 4, "a closed spare was not replaced")
        #expect(probe.failure == nil)
        probe.close()
        #expect(probe.closed)
    }

    @Test("without the setting every connection stays open")
    func withoutTheSettingNothingCloses() throws {
        let (probe, server) = try probe(connections: 3, closeIdleAfter: nil, count: 3)
        defer { server.close() }
        probe.run(seconds: 10) { probe.outcomes.count == 3 && probe.pool.readyConnectionCount == 3 }
        probe.advance(virtualSeconds: 20)
        #expect(probe.pool.readyConnectionCount == 3)
        probe.close()
        #expect(probe.closed)
    }
}
