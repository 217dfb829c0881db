import APNSCore
import APNSCrypto
import APNSTransport
import Foundation
import Synchronization

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
    /// The configuration the server runs with.
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
            throw MockServerError(.configuration, error.description)
        }
        let (context, authority) = try tls.makeContext()
        let acceptedLog = try configuration.acceptedLogPath.map { path throws(MockServerError) in
            try MockAcceptedLog(path: path)
        }
        let startup = MockServerStartup()
        let lifecycle = MockServerLifecycle()
        let thread = Thread {
            // Runs last, after the loop and the listener declared below are released: `stop()` returns only once
            // the thread holds nothing, so a process that exits right after it leaks nothing (LeakSanitizer).
            defer { lifecycle.exited() }
            let loop: EventLoop
            let listener: MockListener
            do throws(TransportError) {
                loop = try EventLoop()
            } catch {
                startup.fail(MockServerError(.eventLoop, error.description))
                lifecycle.finish(MockCounters())
                return
            }
            do throws(TransportError) {
                listener = try MockListener(
                    loop: loop, validator: validator, tlsContext: context,
                    initialLimitEnforcement: initialLimitEnforcement, host: host, port: port, acceptedLog: acceptedLog
                )
            } catch {
                startup.fail(MockServerError(.listen, "\(host):\(port): \(error.description)"))
                lifecycle.finish(MockCounters())
                return
            }
            guard let address = listener.address else {
                startup.fail(MockServerError(.listen, "\(host):\(port): no bound address"))
                lifecycle.finish(listener.shutdown())
                return
            }
            startup.succeed(
                MockServerStartup.Started(
                    address: address, handle: loop.handle, listener: EventLoopBound(listener, loop: loop)))
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

// MARK: - ClientCertificate

/// Reading what the validator needs from the client certificate of a TLS handshake (see `MockClientCertificate`):
/// the subject UID, the topics of Apple's multi-topic extension, and the environment extensions.
extension MockClientCertificate {
    /// Apple's extension listing the topics of a multi-topic ("universal") push certificate.
    static let topicsExtensionOID = "1.2.840.113635.100.6.3.6"
    /// Present on certificates valid against the development (sandbox) environment.
    static let developmentExtensionOID = "1.2.840.113635.100.6.3.1"
    /// Present on certificates valid against the production environment.
    static let productionExtensionOID = "1.2.840.113635.100.6.3.2"

    /// The certificate's topics and environments. Without a subject UID, a common name in Apple's form
    /// ("Apple Push Services: com.example.app") names the topic.
    init(peer certificate: TLSPeerCertificate) {
        var subjectTopic = certificate.subjectUserID
        if subjectTopic == nil, let commonName = certificate.subjectCommonName,
            let range = commonName.range(of: "Push Services: ")
        {
            subjectTopic = String(commonName[range.upperBound...])
        }
        let extensionTopics = certificate.extensions[Self.topicsExtensionOID].map(Self.topics(inExtension:)) ?? []
        self.init(
            subjectUID: subjectTopic,
            extensionTopics: extensionTopics,
            hasDevelopmentExtension: certificate.extensions[Self.developmentExtensionOID] != nil,
            hasProductionExtension: certificate.extensions[Self.productionExtensionOID] != nil
        )
    }

    /// The topics in the DER value of Apple's topics extension: a SEQUENCE alternating a UTF8String topic and a
    /// SEQUENCE of push kinds. Returns the top-level strings; malformed DER yields what was read before it.
    static func topics(inExtension der: [UInt8]) -> [String] {
        var outer = DERReader(der[...])
        guard let sequence = outer.next(), sequence.tag == 0x30 else { return [] }
        var inner = DERReader(sequence.content)
        var topics: [String] = []
        while let element = inner.next() {
            // UTF8String, PrintableString or IA5String.
            if element.tag == 0x0C || element.tag == 0x13 || element.tag == 0x16 {
                topics.append(String(decoding: element.content, as: UTF8.self))
            }
        }
        return topics
    }
}

/// Walks DER elements (tag, definite length, content) in a byte range, stopping at the first malformed one.
private struct DERReader {
    private var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    mutating func next() -> (tag: UInt8, content: ArraySlice<UInt8>)? {
        var index = bytes.startIndex
        guard index < bytes.endIndex else { return nil }
        let tag = bytes[index]
        index += 1
        guard index < bytes.endIndex else { return nil }
        let first = bytes[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count >= 1, count <= 4, bytes.endIndex - index >= count else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[index])
                index += 1
            }
        }
        guard bytes.endIndex - index >= length else { return nil }
        let content = bytes[index..<index + length]
        bytes = bytes[(index + length)...]
        return (tag, content)
    }
}

// MARK: - Threading

/// The hand-over from a starting server's thread to `MockServer.start`: the bound address and loop handle, or
/// why it could not start.
final class MockServerStartup: Sendable {
    struct Started: Sendable {
        let address: SocketAddress
        let handle: EventLoopHandle
        let listener: EventLoopBound<MockListener>
    }

    private let result = Mutex<Result<Started, MockServerError>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func succeed(_ started: Started) {
        result.withLock { $0 = .success(started) }
        ready.signal()
    }

    func fail(_ error: MockServerError) {
        result.withLock { $0 = .failure(error) }
        ready.signal()
    }

    func wait() throws(MockServerError) -> Started {
        ready.wait()
        let outcome =
            result.withLock { $0 } ?? .failure(MockServerError(.eventLoop, "the server thread ended without starting"))
        return try outcome.get()
    }
}

/// Whether a server's thread has ended, and the counters it ended with. Waiting is a latch: every waiter
/// passes once the thread has finished.
final class MockServerLifecycle: Sendable {
    private let final = Mutex<MockCounters?>(nil)
    private let ended = DispatchSemaphore(value: 0)

    /// The final counters, once the loop has stopped.
    var finalCounters: MockCounters? { final.withLock { $0 } }

    /// The loop has stopped with these counters (the thread is still releasing what it held).
    func finish(_ counters: MockCounters) {
        final.withLock { $0 = counters }
    }

    /// The thread's last step: everything it held is released.
    func exited() {
        ended.signal()
    }

    /// Blocks until the thread has ended; returns the final counters.
    @discardableResult
    func waitUntilFinished() -> MockCounters {
        ended.wait()
        ended.signal()  // let the next waiter through too
        return finalCounters ?? MockCounters()
    }
}

/// One answer posted back from the loop's thread.
final class MockServerReply<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let delivered = DispatchSemaphore(value: 0)

    func deliver(_ answer: Value) {
        value.withLock { $0 = answer }
        delivered.signal()
    }

    /// The answer, or nil when none arrived within `seconds`.
    func wait(seconds: Double) -> Value? {
        guard delivered.wait(timeout: .now() + seconds) == .success else { return nil }
        return value.withLock { $0 }
    }
}

// MARK: - MockServerError

/// Why a `MockServer` could not start: a bad configuration, unusable TLS material, or a socket that would not
/// listen. The description is short and stable and carries the underlying library's own text.
public struct MockServerError: KindedError, Hashable, Sendable {
    /// What went wrong, without the detail text; compare errors by kind (the kinds are below).
    public typealias Kind = ErrorKind<MockServerError>

    /// The kind of failure.
    public let kind: Kind
    /// The specifics: the offending setting, OpenSSL's text, `strerror`.
    public let detail: String

    init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// Whether the configuration itself was refused (as opposed to TLS material or the socket).
    public var isConfigurationError: Bool { kind == .configuration }
    /// Whether binding or listening failed (address in use, no permission).
    public var isListenError: Bool { kind == .listen }
}

extension ErrorKind where Owner == MockServerError {
    /// The mock configuration is inconsistent or out of range.
    public static let configuration = Self("invalid mock configuration")
    /// The server's certificate or key could not be made or loaded.
    public static let certificate = Self("cannot prepare the server certificate")
    /// The TLS context could not be set up.
    public static let tls = Self("cannot set up TLS")
    /// The listening socket could not be opened or bound.
    public static let listen = Self("cannot listen")
    /// The event loop could not be started.
    public static let eventLoop = Self("cannot start the event loop")
}
