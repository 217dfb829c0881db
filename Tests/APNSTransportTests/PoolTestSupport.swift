import APNSCore
import APNSHTTP2
import Foundation
import Testing

@testable import APNSTransport

/// A small HTTP/2-over-TLS server for pool tests, on 127.0.0.1:0 in the test's loop: each accepted connection
/// gets an `HTTP2ServerSession`, and `answer` decides what happens to each request (respond, or leave it open).
/// With `closeBeforeSettings` it accepts TLS and ALPN h2, then closes each connection as soon as the client
/// speaks, before sending its own SETTINGS.
final class H2TestServer {
    /// One accepted connection: its TLS side and HTTP/2 session.
    final class Connection: TLSConnectionDelegate {
        let session: HTTP2ServerSession
        unowned let server: H2TestServer
        var tls: TLSConnection?
        /// Requests this connection received.
        var requests = 0
        private var output: [UInt8] = []

        init(server: H2TestServer) throws {
            self.server = server
            session = try HTTP2ServerSession(
                configuration: HTTP2ServerConfiguration(maxConcurrentStreams: server.maxConcurrentStreams))
        }

        func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo) {
            guard !server.closeBeforeSettings else { return }
            send()
        }

        func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan) {
            if server.closeBeforeSettings {
                server.bytesBeforeClose += bytes.byteCount
                connection.abort()
                return
            }
            session.receive(bytes)
            session.drainEvents { event in
                switch event {
                case .request(let request):
                    server.requests += 1
                    requests += 1
                    server.answer(request, session)
                case .streamClosed(let streamID, let code):
                    server.onStreamClosed(streamID, code)
                default:
                    break
                }
            }
            send()
        }

        func tlsConnectionDidDrainOutput(_ connection: TLSConnection) {}

        func tlsConnection(_ connection: TLSConnection, didCloseWith error: TransportError?) {}

        func send() {
            // A muted connection still reads (and counts requests) but writes nothing: no answers, no PING acks.
            if let mute = server.muteAfterRequests, requests >= mute { return }
            output.removeAll(keepingCapacity: true)
            session.produceOutput(into: &output)
            guard !output.isEmpty else { return }
            tls?.write(output)
            tls?.flush()
        }
    }

    let listener: SocketListener
    var connections: [Connection] = []
    var closeBeforeSettings = false
    /// SETTINGS_MAX_CONCURRENT_STREAMS each connection announces.
    var maxConcurrentStreams = 100
    /// After this many requests a connection goes silent (a dead peer whose TCP connection stays up).
    var muteAfterRequests: Int?
    var requests = 0
    var bytesBeforeClose = 0
    /// Hears each stream the client reset (or that ended before its answer).
    var onStreamClosed: (Int32, HTTP2ErrorCode) -> Void = { _, _ in }
    /// Decides each request's fate; by default a 200 with an apns-id.
    var answer: (HTTP2ServerRequest, HTTP2ServerSession) -> Void = { request, session in
        try? session.respond(
            to: request.streamID, status: 200, headers: [("apns-id", "00000000-0000-0000-0000-000000000001")])
    }

    init(loop: EventLoop, context: TLSServerContext) throws {
        var accepted: (Socket) -> Void = { _ in }
        listener = try SocketListener(loop: loop) { accepted($0) }
        accepted = { [unowned self] socket in
            do {
                let connection = try Connection(server: self)
                connection.tls = try TLSConnection(
                    acceptedSocket: socket, context: context, loop: loop, delegate: connection)
                self.connections.append(connection)
            } catch {
                Issue.record("server connection: \(error)")
            }
        }
    }

    var port: Int { listener.port }

    /// Sends what the sessions queued outside a receive (answers given later by a test).
    func flush() { connections.forEach { $0.send() } }

    func close() {
        listener.close()
        connections.forEach { $0.tls?.abort() }
    }
}

/// Drives an `APNSClientPool` in the test's loop: submits its notifications as slots free up and records how
/// each tag ended and whether (and when) the pool gave up.
final class PoolProbe: PushTransportDelegate {
    let loop: EventLoop
    let pool: APNSClientPool
    private var pending: [(UInt64, PushNotification)]
    private(set) var outcomes: [UInt64: PushOutcome] = [:]
    private(set) var failure: (any Error)?
    private(set) var failedAfter: Double?
    /// Whether the pool reported `transportDidClose`.
    private(set) var closed = false
    /// When the probe was made, on the loop's clock (a manual one in the tests that move time by hand).
    private let started: EventLoopInstant

    init(_ configuration: APNSClientConfiguration, loop: EventLoop, count: Int) throws {
        self.loop = loop
        started = loop.now()
        pool = try APNSClientPool(configuration: configuration, loop: loop)
        pending = Self.notifications(count).enumerated().map { (UInt64($0.offset + 1), $0.element) }.reversed()
        pool.delegate = self
    }

    /// A configuration reaching 127.0.0.1:`port`, trusting the fixture CA, with certificate trust.
    static func configuration(port: Int, connections: Int = 1) -> APNSClientConfiguration {
        var configuration = APNSClientConfiguration(
            endpoint: APNSEndpoint(host: "127.0.0.1", port: port), authentication: .certificate,
            tls: TLSClientConfiguration(trustRoots: TLSFixtures.rootCA))
        configuration.tls.handshake.timeout = 5
        configuration.maximumConnections = connections
        configuration.initialConnections = connections
        configuration.streamsPerConnection = configuration.maximumStreamsPerConnection
        configuration.reconnect = ExponentialBackoff(base: 0.5, cap: 2, maximumAttempts: 12)
        return configuration
    }

    static func notifications(_ count: Int) -> [PushNotification] {
        (0..<count).compactMap { index in
            let hex = String(repeating: "a", count: 64 - String(index, radix: 16).count) + String(index, radix: 16)
            guard let token = try? DeviceToken(parsing: hex), let topic = try? Topic(validating: "com.example.app")
            else {
                return nil
            }
            return PushNotification(token: token, topic: topic, pushType: .alert, payload: Array(#"{"aps":{}}"#.utf8))
        }
    }

    /// Starts the pool and turns the loop until `done`, the pool fails, or `seconds` pass.
    func run(seconds: Double, until done: () -> Bool = { false }) {
        pool.start()
        spin(loop, seconds: seconds) { done() || failure != nil }
    }

    func close() {
        pool.close(gracePeriod: 0)
        spin(loop, seconds: 2) { false }
    }

    /// On a loop with a manual clock: handles the I/O that is ready (a few short turns), then moves the clock on by
    /// `step` seconds, until `done`, the pool fails, or `virtualSeconds` have passed on the clock. Timeouts of
    /// seconds take a few milliseconds of real time, and what the test sees does not hang on the host's speed.
    func advance(virtualSeconds: Double, step: Double = 0.25, until done: () -> Bool = { false }) {
        var moved = 0.0
        while true {
            for _ in 0..<Self.turnsPerStep { loop.runOnce(timeout: 0.002) }
            if done() || failure != nil || moved >= virtualSeconds { return }
            loop.advanceTime(bySeconds: step)
            moved += step
        }
    }

    /// Loop turns between two moves of a manual clock: enough for a request and its answer over loopback.
    static let turnsPerStep = 20

    private func pump() {
        var submitted = false
        while pool.freeSlots > 0, let (tag, notification) = pending.popLast() {
            pool.submit(notification, tag: tag)
            submitted = true
        }
        if submitted { pool.flush() }
    }

    func transport(completed tag: UInt64, outcome: PushOutcome) {
        #expect(outcomes[tag] == nil, "tag \(tag) reported twice")
        outcomes[tag] = outcome
    }

    func transportHasFreeSlots() {
        loop.executeNextTurn { [weak self] in self?.pump() }
    }

    func transportFailed(_ error: any Error) {
        guard failure == nil else { return }
        failure = error
        failedAfter = loop.now().seconds(since: started)
    }

    func transportDidClose() { closed = true }
}
