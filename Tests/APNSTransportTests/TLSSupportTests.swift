import APNSCrypto
import Foundation
import Testing

@testable import APNSTransport

/// The generated certificates in Tests/Fixtures/tls (see its README) and their pins from pins.txt, which the
/// openssl CLI computed independently of the code under test.
enum TLSFixtures {
    static let directory: String = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/tls").path

    static func path(_ name: String) -> String { directory + "/" + name }

    static func text(_ name: String) throws -> String { try String(contentsOfFile: path(name), encoding: .utf8) }

    /// The SPKI-SHA256-BASE64 pin of a fixture certificate ("root-ca", "server", …).
    static func pin(_ name: String) throws -> String {
        let lines = try text("pins.txt").split(separator: "\n")
        let line = try #require(lines.first { $0.hasPrefix(name + " ") })
        return String(line.dropFirst(name.count + 1))
    }

    static let serverIdentity = TLSIdentity.pemFiles(
        certificateChainPath: path("server-chain.pem"),
        privateKeyPath: path("server.key"))
    static let rootCA = TLSTrustRoots.pemFile(path: path("root-ca.pem"))
    static let clientIdentity = TLSIdentity.pemFiles(
        certificateChainPath: path("client-chain.pem"),
        privateKeyPath: path("client.key"))

    static func clientContext(_ change: (inout TLSClientConfiguration) throws -> Void = { _ in }) throws
        -> TLSClientContext
    {
        var configuration = TLSClientConfiguration(trustRoots: rootCA)
        configuration.handshake.timeout = 5
        try change(&configuration)
        return try TLSClientContext(configuration)
    }

    static func serverContext(_ change: (inout TLSServerConfiguration) throws -> Void = { _ in }) throws
        -> TLSServerContext
    {
        var configuration = TLSServerConfiguration(identity: serverIdentity)
        configuration.handshake.timeout = 5
        try change(&configuration)
        return try TLSServerContext(configuration)
    }
}

/// Records what a TLS connection reports; optionally echoes what it receives.
final class TLSRecorder: TLSConnectionDelegate {
    var info: TLSHandshakeInfo?
    var received: [UInt8] = []
    var closed = false
    var closeError: TransportError?
    var drains = 0
    var echo = false
    /// Callbacks after the handshake and after each delivery (to close or abort from inside a callback).
    var afterHandshake: ((TLSConnection) -> Void)?
    var afterReceive: ((TLSConnection) -> Void)?
    /// Every callback, in order, for checking that nothing follows a close.
    var events: [String] = []

    func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo) {
        self.info = info
        events.append("handshake")
        afterHandshake?(connection)
    }

    func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan) {
        let copy = bytes.withUnsafeBytes { Array($0) }
        received.append(contentsOf: copy)
        if echo {
            connection.write(copy)
            connection.flush()
        }
        events.append("receive")
        afterReceive?(connection)
    }

    func tlsConnectionDidDrainOutput(_ connection: TLSConnection) {
        drains += 1
    }

    func tlsConnection(_ connection: TLSConnection, didCloseWith error: TransportError?) {
        closed = true
        closeError = error
        events.append("close")
    }

    var isDone: Bool { info != nil || closed }
}

/// A TLS server on 127.0.0.1:0 in the test's loop; records every accepted connection.
final class TLSTestServer {
    let listener: SocketListener
    var connections: [TLSConnection] = []
    var recorders: [TLSRecorder] = []

    init(loop: EventLoop, context: TLSServerContext, echo: Bool = false) throws {
        var accepted: (Socket) -> Void = { _ in }
        listener = try SocketListener(loop: loop) { accepted($0) }
        accepted = { [unowned self] socket in
            let recorder = TLSRecorder()
            recorder.echo = echo
            do {
                self.connections.append(
                    try TLSConnection(
                        acceptedSocket: socket, context: context, loop: loop,
                        delegate: recorder))
                self.recorders.append(recorder)
            } catch {
                Issue.record("server connection: \(error)")
            }
        }
    }

    var port: Int { listener.port }
    var first: TLSRecorder? { recorders.first }

    func close() {
        listener.close()
        connections.forEach { $0.abort() }
    }
}

/// A client connection over a socket connected to 127.0.0.1:`port`, verifying `serverName`.
func connectClient(
    loop: EventLoop, port: Int, serverName: String = "localhost",
    context: TLSClientContext, recorder: TLSRecorder
) throws -> TLSConnection? {
    var connected: Result<Socket, TransportError>?
    let address = try #require(SocketAddress(ipAddress: "127.0.0.1", port: port))
    SocketConnector(loop: loop, addresses: [address], timeout: 5) { connected = $0 }.start()
    spin(loop) { connected != nil }
    let socket = try #require(try connected?.get())
    return try TLSConnection(
        clientSocket: socket, serverName: serverName, context: context, loop: loop,
        delegate: recorder)
}

/// Runs loop turns until `done` or `seconds` pass.
func spin(_ loop: EventLoop, seconds: Double = 10, until done: () -> Bool) {
    let deadline = EventLoopInstant.now().advanced(bySeconds: seconds)
    while !done() && EventLoopInstant.now() < deadline { loop.runOnce(timeout: 0.05) }
}

/// Runs loop turns until `done`, for as long as `progress` keeps growing: gives up after `idleSeconds` without
/// progress, or `limitSeconds` in all. A deadline for bulk transfers that a slow machine or a sanitizer's
/// slowdown stretches instead of failing, and that still ends a stalled transfer quickly.
func spin(
    _ loop: EventLoop, idleSeconds: Double, limitSeconds: Double = 600, progress: () -> Int,
    until done: () -> Bool
) {
    let limit = EventLoopInstant.now().advanced(bySeconds: limitSeconds)
    var lastProgress = progress()
    var idleDeadline = EventLoopInstant.now().advanced(bySeconds: idleSeconds)
    while !done() {
        let now = EventLoopInstant.now()
        guard now < limit, now < idleDeadline else { return }
        loop.runOnce(timeout: 0.05)
        let current = progress()
        if current != lastProgress {
            lastProgress = current
            idleDeadline = EventLoopInstant.now().advanced(bySeconds: idleSeconds)
        }
    }
}

@Suite("TLS credentials")
struct TLSSupportTests {
    @Test("identities load from PEM files, PEM text, PKCS#12 and legacy PKCS#12")
    func identitiesLoad() throws {
        let identities: [TLSIdentity] = [
            TLSFixtures.clientIdentity,
            .pem(
                certificateChain: try TLSFixtures.text("client-chain.pem"),
                privateKey: try TLSFixtures.text("client.key")),
            .pkcs12File(path: TLSFixtures.path("client.p12"), password: "apns-test"),
            .pkcs12File(path: TLSFixtures.path("client-legacy.p12"), password: "apns-test"),
        ]
        for identity in identities {
            let context = try TLSFixtures.clientContext { $0.identity = identity }
            #expect(context.configuration.identity == identity)
        }
    }

    @Test(
        "unusable credentials fail with a clear configuration error",
        arguments: [
            TLSIdentity.pkcs12File(path: TLSFixtures.path("client.p12"), password: "wrong"),
            TLSIdentity.pemFiles(
                certificateChainPath: TLSFixtures.path("client.pem"), privateKeyPath: TLSFixtures.path("server.key")),
            TLSIdentity.pemFiles(
                certificateChainPath: TLSFixtures.path("missing.pem"), privateKeyPath: TLSFixtures.path("client.key")),
            TLSIdentity.pemFiles(
                certificateChainPath: TLSFixtures.path("client.key"), privateKeyPath: TLSFixtures.path("client.key")),
            TLSIdentity.pem(certificateChain: "not PEM", privateKey: "not PEM"),
        ])
    func badIdentities(identity: TLSIdentity) throws {
        let error = #expect(throws: TransportError.self) { try TLSFixtures.clientContext { $0.identity = identity } }
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.detail.isEmpty == false)
    }

    @Test(
        "a wrong PKCS#12 password is reported as such, naming the file; a file that is not PKCS#12 is not called a wrong password",
        arguments: [
            "client.p12", "client-legacy.p12",
        ])
    func pkcs12Password(fixture: String) throws {
        let path = TLSFixtures.path(fixture)
        let wrong = #expect(throws: TransportError.self) {
            try TLSFixtures.clientContext { $0.identity = .pkcs12File(path: path, password: "not-the-password") }
        }
        #expect(wrong?.kind == .invalidConfiguration)
        #expect(wrong?.detail.hasPrefix("wrong PKCS#12 password: \(path)") == true, "\(wrong?.detail ?? "")")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let wrongBytes = #expect(throws: TransportError.self) {
            try TLSFixtures.clientContext { $0.identity = .pkcs12(bytes: bytes, password: "") }
        }
        #expect(wrongBytes?.detail.hasPrefix("wrong PKCS#12 password") == true, "\(wrongBytes?.detail ?? "")")
        let notPKCS12 = TLSFixtures.path("client.pem")
        let malformed = #expect(throws: TransportError.self) {
            try TLSFixtures.clientContext { $0.identity = .pkcs12File(path: notPKCS12, password: "apns-test") }
        }
        #expect(malformed?.kind == .invalidConfiguration)
        #expect(malformed?.detail.hasPrefix("malformed PKCS#12: \(notPKCS12)") == true, "\(malformed?.detail ?? "")")
        #expect(malformed?.detail.contains("password") == false, "\(malformed?.detail ?? "")")
    }

    @Test("malformed pins and impossible versions are refused up front")
    func badConfiguration() throws {
        #expect(throws: TransportError.self) { try TLSFixtures.clientContext { $0.pinnedSPKISHA256 = ["sha256/abc"] } }
        #expect(throws: TransportError.self) {
            try TLSFixtures.clientContext {
                $0.handshake.minimumVersion = .tls1_3
                $0.handshake.maximumVersion = .tls1_2
            }
        }
        #expect(throws: TransportError.self) {
            try TLSFixtures.clientContext { $0.handshake.cipherList = "NO-SUCH-CIPHER" }
        }
        #expect(throws: TransportError.self) { try TLSFixtures.clientContext { $0.trustRoots = .pem("nothing") } }
        _ = try TLSFixtures.clientContext { $0.pinnedSPKISHA256 = [try TLSFixtures.pin("root-ca")] }
        _ = try TLSClientContext(TLSClientConfiguration())  // the system store loads
    }

    @Test("peer SPKI pins match the openssl CLI's and APNSCrypto's for every certificate a handshake shows")
    func spkiPins() throws {
        let loop = try EventLoop()
        let server = try TLSTestServer(
            loop: loop,
            context: try TLSFixtures.serverContext {
                $0.clientCertificates = .required(trustRoots: TLSFixtures.rootCA)
            })
        let recorder = TLSRecorder()
        let client = TLSConnection.connect(
            host: "localhost", port: server.port,
            context: try TLSFixtures.clientContext { $0.identity = TLSFixtures.clientIdentity },
            loop: loop, delegate: recorder)
        spin(loop) { recorder.isDone && server.first?.isDone == true }
        let seen = (recorder.info?.peerCertificates ?? []) + (server.first?.info?.peerCertificates ?? [])
        #expect(seen.count == 4)  // server leaf + intermediate, client leaf + intermediate
        let expected = try ["server", "intermediate-ca", "client"].map { try TLSFixtures.pin($0) }
        for certificate in seen {
            #expect(expected.contains(certificate.spkiSHA256Base64), "\(certificate)")
            #expect(try SPKIPin.sha256Base64(certificateDER: certificate.der) == certificate.spkiSHA256Base64)
        }
        client.abort()
        server.close()
    }

    @Test("pins are normalized: curl's sha256// prefix and surrounding spaces are accepted")
    func pinSyntax() throws {
        let pin = try TLSFixtures.pin("root-ca")
        let context = try TLSFixtures.clientContext { $0.pinnedSPKISHA256 = ["sha256//" + pin, " \(pin) "] }
        #expect(context.configuration.pinnedSPKISHA256 == [pin, pin])
    }
}
