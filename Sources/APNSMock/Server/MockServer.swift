import APNSCrypto
import APNSTransport
import Foundation

/// A mock APNs server on its own thread and event loop: listens on `address`, speaks TLS (ALPN h2) and HTTP/2,
/// answers every request as `MockValidator` decides, and carries out its connection actions (stream limits,
/// GOAWAY, drops, latency, refused streams). Owns the thread; `stop()` (or releasing the server) ends it.
///
///     let server = try MockServer.start(configuration: MockConfiguration(keys: [key]))
///     // trust server.caPEM, connect to 127.0.0.1:server.port
///     let counters = server.stop()
///
/// Every method may be called from any thread except the server's own loop thread (nor may the last reference be
/// released there: releasing the server stops it and waits for its thread).
public final class MockServer: Sendable {
    /// The address the server listens on, with the real port when port 0 was asked for.
    public let address: SocketAddress
    /// The CA certificate (PEM) that issued a generated server certificate: what clients trust (`--ca-file`).
    /// Nil when the server was given its own certificate.
    public let caPEM: String?
    /// The CA behind a generated certificate (nil otherwise): tests can issue client certificates with it.
    public let certificateAuthority: TestCertificateAuthority?
    public let configuration: MockConfiguration

    private let handle: EventLoopHandle
    private let listener: EventLoopBound<MockListener>
    private let lifecycle: MockServerLifecycle

    /// The bound port.
    public var port: Int { address.port }
    /// `https://HOST:PORT`, for logs and clients.
    public var url: String { "https://\(address)" }

    /// When the initial stream limit (`MockConfiguration.initialConcurrentStreams`) starts to bind a client.
    public enum InitialLimitEnforcement: Sendable, Hashable {
        /// Once the client has acknowledged the SETTINGS frame that announced it (RFC 9113 section 6.5.3): streams
        /// a client opens right after the handshake, before it could know the limit, are served.
        case onceAcknowledged
        /// From the start: streams over the limit are refused (RST_STREAM REFUSED_STREAM) even when the client
        /// opened them before it saw the limit; tests a client's resending of refused streams.
        case immediately
    }

    /// Starts a server listening on `host:port` (port 0: an ephemeral port, see `port`) and returns once it is
    /// accepting connections.
    public static func start(
        configuration: MockConfiguration,
        tls: MockServerTLS = .generated(),
        host: String = "127.0.0.1",
        port: Int = 0,
        initialLimitEnforcement: InitialLimitEnforcement = .onceAcknowledged
    ) throws(MockServerError) -> MockServer {
        let validator: MockValidator
        do throws(MockConfigurationError) {
            validator = try MockValidator(configuration: configuration)
        } catch {
            throw .configuration(error.description)
        }
        let (context, authority) = try tls.makeContext()
        let acceptedLog = try configuration.acceptedLogPath.map { path throws(MockServerError) in try MockAcceptedLog(path: path) }
        let startup = MockServerStartup()
        let lifecycle = MockServerLifecycle()
        let thread = Thread {
            let loop: EventLoop
            let listener: MockListener
            do throws(TransportError) {
                loop = try EventLoop()
            } catch {
                startup.fail(.eventLoop(error.description))
                lifecycle.finish(MockCounters())
                return
            }
            do throws(TransportError) {
                listener = try MockListener(
                    loop: loop, validator: validator, tlsContext: context,
                    initialLimitEnforcement: initialLimitEnforcement, host: host, port: port, acceptedLog: acceptedLog
                )
            } catch {
                startup.fail(.listen("\(host):\(port): \(error.description)"))
                lifecycle.finish(MockCounters())
                return
            }
            guard let address = listener.address else {
                startup.fail(.listen("\(host):\(port): no bound address"))
                lifecycle.finish(listener.shutdown())
                return
            }
            startup.succeed(MockServerStartup.Started(address: address, handle: loop.handle, listener: EventLoopBound(listener, loop: loop)))
            loop.run()
            let counters = listener.shutdown()
            loop.shutdown()  // what is left (timers, closing connections) holds the loop: drop it
            lifecycle.finish(counters)
        }
        thread.name = "apns-bulk-mock"
        thread.stackSize = 8 << 20
        thread.start()
        let started = try startup.wait()
        return MockServer(
            address: started.address,
            caPEM: authority?.certificatePEM,
            certificateAuthority: authority,
            configuration: configuration,
            handle: started.handle,
            listener: started.listener,
            lifecycle: lifecycle
        )
    }

    private init(
        address: SocketAddress,
        caPEM: String?,
        certificateAuthority: TestCertificateAuthority?,
        configuration: MockConfiguration,
        handle: EventLoopHandle,
        listener: EventLoopBound<MockListener>,
        lifecycle: MockServerLifecycle
    ) {
        self.address = address
        self.caPEM = caPEM
        self.certificateAuthority = certificateAuthority
        self.configuration = configuration
        self.handle = handle
        self.listener = listener
        self.lifecycle = lifecycle
    }

    deinit {
        handle.stop()
        lifecycle.waitUntilFinished()
    }

    /// A snapshot of the counters, taken on the server's thread between two loop turns (the final counters once
    /// stopped).
    public func counters() -> MockCounters {
        query { $0.validator.counters } ?? lifecycle.waitUntilFinished()
    }

    /// Connections open right now (handshaking included); 0 once stopped.
    public func openConnectionCount() -> Int {
        query { $0.connectionCount } ?? 0
    }

    /// Whether `stop()` has completed (or the server's thread ended otherwise).
    public var isStopped: Bool { lifecycle.finalCounters != nil }

    /// Stops listening, closes every connection at once, ends the thread and returns the final counters.
    /// Idempotent: later calls return the same counters.
    @discardableResult
    public func stop() -> MockCounters {
        handle.stop()
        return lifecycle.waitUntilFinished()
    }

    /// Runs `body` with the listener on the loop's thread and returns its result; nil when the server stopped
    /// before it could run.
    private func query<Value: Sendable>(_ body: @escaping @Sendable (MockListener) -> Value) -> Value? {
        if lifecycle.finalCounters != nil { return nil }
        let reply = MockServerReply<Value>()
        let listener = self.listener
        guard handle.execute({ loop in reply.deliver(body(listener.value(in: loop))) }) else { return nil }
        while true {
            if let value = reply.wait(seconds: 0.05) { return value }
            if lifecycle.finalCounters != nil { return nil }  // stopped: the posted work will never run
        }
    }
}
