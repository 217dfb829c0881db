import APNSCore
import APNSCrypto
import APNSHTTP2
import APNSTransport
import Foundation
import Testing

@testable import APNSMock

/// A minimal HTTP/2 client on its own event loop (the transport's TLS connection and client session, nothing of
/// the pool), recording every frame-level fact a test needs: the changes of the stream limit, answers,
/// failed streams, the GOAWAY and how the connection ended.
final class MockServerRawClient: TLSConnectionDelegate {
    struct Answer {
        let streamID: Int32
        let status: Int
        let body: String
    }

    let loop: EventLoop
    let session: HTTP2ClientSession
    private(set) var connection: TLSConnection?
    private(set) var limits: [Int] = []
    private(set) var answers: [UInt64: Answer] = [:]
    private(set) var answerOrder: [UInt64] = []
    private(set) var failures: [UInt64: TransportFailure] = [:]
    private(set) var goaway: HTTP2Goaway?
    private(set) var goawayDebugData = ""
    private(set) var isClosed = false
    private(set) var closeError: TransportError?
    private var output: [UInt8] = []
    private var nextTag: UInt64 = 0
    /// Every byte the server sent, in order (`serverFrames` reads the frame headers).
    private(set) var received: [UInt8] = []

    init(port: Int, caPEM: String, identity: TLSIdentity? = nil, assumedPeerLimit: Int = 1) throws {
        loop = try EventLoop()
        session = try HTTP2ClientSession(
            configuration: HTTP2ClientConfiguration(assumedPeerMaxConcurrentStreams: assumedPeerLimit))
        let context = try TLSClientContext(TLSClientConfiguration(trustRoots: .pem(caPEM), identity: identity))
        connection = TLSConnection.connect(host: "127.0.0.1", port: port, context: context, loop: loop, delegate: self)
    }

    deinit {
        connection?.abort()
    }

    /// Submits a POST to `/3/device/<token>` and, unless `flush` is false, writes it out; returns its tag.
    @discardableResult
    func send(
        token: String = MockServerFixture.goodToken, authorization: String?, topic: String? = MockServerFixture.topic,
        flush: Bool = true
    ) throws -> UInt64 {
        var fields = HTTP2HeaderFieldList()
        fields.append(name: ":method", value: "POST")
        fields.append(name: ":scheme", value: "https")
        fields.append(name: ":path", value: "/3/device/\(token)")
        fields.append(name: ":authority", value: "127.0.0.1")
        if let authorization { fields.append(name: "authorization", value: authorization) }
        if let topic { fields.append(name: "apns-topic", value: topic) }
        nextTag += 1
        try session.submitRequest(block: nil, fields: fields, body: Array(MockServerFixture.payload.utf8), tag: nextTag)
        if flush { pushOutput() }
        return nextTag
    }

    var finishedCount: Int { answers.count + failures.count }

    /// The server's frames so far, as "SETTINGS", "SETTINGS ACK", "SETTINGS MCS=<n>", "HEADERS 1", ... (the
    /// frame headers of `received`, read from the start: a server sends no preface).
    var serverFrames: [String] {
        var frames: [String] = []
        var offset = 0
        while received.count - offset >= 9 {
            let length = Int(received[offset]) << 16 | Int(received[offset + 1]) << 8 | Int(received[offset + 2])
            guard received.count - offset >= 9 + length else { break }
            let type = received[offset + 3]
            let flags = received[offset + 4]
            let streamID = received[offset + 5..<offset + 9].reduce(0) { $0 << 8 | Int($1) } & 0x7FFF_FFFF
            let payload = received[offset + 9..<offset + 9 + length]
            switch type {
            case 4 where flags & 1 != 0:
                frames.append("SETTINGS ACK")
            case 4:
                var text = "SETTINGS"
                for entry in stride(from: payload.startIndex, to: payload.endIndex - 5, by: 6)
                where payload[entry] == 0 && payload[entry + 1] == 3 {
                    text += " MCS=\(payload[entry + 2..<entry + 6].reduce(0) { $0 << 8 | Int($1) })"
                }
                frames.append(text)
            case 0: frames.append("DATA \(streamID)")
            case 1: frames.append("HEADERS \(streamID)")
            case 3: frames.append("RST_STREAM \(streamID)")
            case 6: frames.append(flags & 1 != 0 ? "PING ACK" : "PING")
            case 7: frames.append("GOAWAY")
            case 8: frames.append("WINDOW_UPDATE \(streamID)")
            default: frames.append("type \(type)")
            }
            offset += 9 + length
        }
        return frames
    }

    /// Runs the loop until `done` or `seconds` pass.
    func spin(seconds: Double = 10, until done: () -> Bool) {
        let deadline = EventLoopInstant.now().advanced(bySeconds: seconds)
        while !done() && EventLoopInstant.now() < deadline { loop.runOnce(timeout: 0.05) }
    }

    /// Writes what the session has to send.
    func pushOutput() {
        session.produceOutput(into: &output)
        guard !output.isEmpty, let connection else { return }
        connection.write(output)
        output.removeAll(keepingCapacity: true)
        connection.flush()
    }

    private func record() {
        session.drainEvents { event in
            switch event {
            case .response(let response):
                answers[response.tag] = Answer(
                    streamID: response.streamID, status: response.status,
                    body: String(decoding: response.body, as: UTF8.self)
                )
                answerOrder.append(response.tag)
            case .streamFailed(let tag, _, let failure):
                failures[tag] = failure
            case .goawayReceived(let received):
                goaway = received
                goawayDebugData = String(decoding: received.debugData, as: UTF8.self)
            case .remoteSettingsChanged(let limit):
                limits.append(limit)
            case .pingAcknowledged, .connectionError:
                break
            }
        }
    }

    func tlsConnection(_ connection: TLSConnection, didCompleteHandshake info: TLSHandshakeInfo) {
        pushOutput()
    }

    func tlsConnection(_ connection: TLSConnection, didReceive bytes: RawSpan) {
        bytes.withUnsafeBytes { received.append(contentsOf: $0) }
        session.receive(bytes)
        record()
        pushOutput()
    }

    func tlsConnectionDidDrainOutput(_ connection: TLSConnection) {
        pushOutput()
    }

    func tlsConnection(_ connection: TLSConnection, didCloseWith error: TransportError?) {
        isClosed = true
        closeError = error
        session.connectionClosed()
        record()
    }
}

@Suite("Mock server stream limits and connection actions")
struct MockServerStreamTests {
    @Test("the stream limit starts at 1 and is raised by the first authenticated request, not by a rejected one")
    func limitStartsAtOneAndIsRaised() throws {
        let fixture = try MockServerFixture { $0.maxConcurrentStreams = 700 }
        let stranger = try MockServerFixture()
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        client.spin { client.session.streamSlots.hasReceivedPeerSettings }
        #expect(client.session.streamSlots.hasReceivedPeerSettings)
        #expect(client.session.streamSlots.peerLimit == 1)

        let rejected = try client.send(authorization: stranger.authorization)
        client.spin { client.answers[rejected] != nil }
        #expect(client.answers[rejected]?.status == 403)
        #expect(!client.limits.contains(700))
        #expect(client.session.streamSlots.limit == 1)

        let accepted = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[accepted] != nil && client.limits.last == 700 }
        #expect(client.answers[accepted]?.status == 200)
        #expect(client.limits.last == 700)
        #expect(client.session.availableStreamSlots == 700)

        // 300 streams at once: all served on the raised limit.
        let tags = try (0..<300).map { _ in try client.send(authorization: fixture.authorization) }
        client.spin { client.finishedCount == 302 }
        #expect(tags.allSatisfy { client.answers[$0]?.status == 200 })
        let counters = fixture.server.counters()
        #expect(counters.streamLimitRaises == 1)
        #expect(counters.byStatus == [200: 301, 403: 1])
    }

    @Test(
        "the raise after authentication: the SETTINGS ACK owed to the client goes out before the new limit (RFC 9113 6.5.3)",
        arguments: [false, true], [MockServer.InitialLimitEnforcement.onceAcknowledged, .immediately])
    func acknowledgementBeforeRaise(waitForServerSettings: Bool, enforcement: MockServer.InitialLimitEnforcement) throws
    {
        let fixture = try MockServerFixture(enforcement: enforcement) { $0.maxConcurrentStreams = 700 }
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        if waitForServerSettings { client.spin { client.session.streamSlots.hasReceivedPeerSettings } }
        let tag = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[tag] != nil && client.limits.last == 700 }
        #expect(client.answers[tag]?.status == 200)
        let frames = client.serverFrames
        let settings = frames.filter { $0.hasPrefix("SETTINGS") }
        let acknowledgement = try #require(settings.firstIndex(of: "SETTINGS ACK"), "\(frames)")
        let raise = try #require(settings.firstIndex(of: "SETTINGS MCS=700"), "\(frames)")
        #expect(acknowledgement < raise, "\(frames)")
        #expect(settings.first == "SETTINGS MCS=1", "\(frames)")
    }

    @Test(
        "once the client acknowledges the first SETTINGS, no second, identical one follows (h2spec waits for its own ACK there)"
    )
    func noSecondInitialSettings() throws {
        let fixture = try MockServerFixture { $0.maxConcurrentStreams = 700 }
        let stranger = try MockServerFixture()
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        client.spin { client.session.streamSlots.hasReceivedPeerSettings }
        // A rejected request keeps the initial limit (no raise) and makes the server read the client's ACK.
        let rejected = try client.send(authorization: stranger.authorization)
        client.spin { client.answers[rejected] != nil }
        let second = try client.send(authorization: stranger.authorization)
        client.spin { client.answers[second] != nil }
        #expect(client.answers[second]?.status == 403)
        let announced = client.serverFrames.filter { $0.hasPrefix("SETTINGS") && $0 != "SETTINGS ACK" }
        #expect(announced == ["SETTINGS MCS=1"], "\(client.serverFrames)")
        // The initial limit still holds: the raise comes with the first authenticated request, as one frame.
        let accepted = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[accepted] != nil && client.limits.last == 700 }
        let after = client.serverFrames.filter { $0.hasPrefix("SETTINGS") && $0 != "SETTINGS ACK" }
        #expect(after == ["SETTINGS MCS=1", "SETTINGS MCS=700"], "\(client.serverFrames)")
    }

    @Test(
        "streams opened before the client saw the initial limit are served (default) or refused (.immediately)",
        arguments: [MockServer.InitialLimitEnforcement.onceAcknowledged, .immediately])
    func earlyBurst(enforcement: MockServer.InitialLimitEnforcement) throws {
        let fixture = try MockServerFixture(enforcement: enforcement)
        // The client assumes 10 streams until the server's SETTINGS arrive, and sends 5 with the handshake.
        let client = try MockServerRawClient(
            port: fixture.server.port, caPEM: try #require(fixture.server.caPEM), assumedPeerLimit: 10
        )
        let tags = try (0..<5).map { _ in try client.send(authorization: fixture.authorization) }
        client.spin { client.finishedCount == 5 }
        let served = tags.filter { client.answers[$0]?.status == 200 }.count
        let refused = tags.filter { client.failures[$0] == .refusedStream }.count
        switch enforcement {
        case .onceAcknowledged:
            #expect(served == 5)
        case .immediately:
            #expect(served == 1)
            #expect(refused == 4)
        }
        #expect(client.session.streamSlots.hasReceivedPeerSettings)
        #expect(fixture.server.counters().requests == served)  // refused streams never reach the validator
    }

    @Test("goaway=after:3 answers 3 streams, sends GOAWAY Shutdown with the last one, then closes cleanly")
    func goaway() throws {
        let fixture = try MockServerFixture { $0.faults = try FaultPlan(parsing: ["goaway=after:3"]) }
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        let first = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[first] != nil && client.session.availableStreamSlots > 1 }
        // The other 9 in one write, so they reach the server together (one by one, the server could close the
        // connection after the third answer before the later ones arrive, which is also correct).
        let rest = try (0..<9).map { _ in try client.send(authorization: fixture.authorization, flush: false) }
        client.pushOutput()
        client.spin { client.finishedCount == 10 && client.isClosed }

        let goaway = try #require(client.goaway)
        #expect(goaway.errorCode == .noError)
        #expect(client.goawayDebugData == #"{"reason":"Shutdown"}"#)
        #expect(goaway.reason == .shutdown)
        let answered = ([first] + rest).filter { client.answers[$0]?.status == 200 }
        #expect(answered.count == 3)
        #expect(goaway.lastStreamID == answered.compactMap { client.answers[$0]?.streamID }.max())
        #expect(rest.filter { client.failures[$0]?.isSafeToResend == true }.count == 7)
        #expect(client.isClosed)
        #expect(client.closeError == nil)  // close_notify, not a dropped socket
        #expect(fixture.server.counters().goaways == 1)
    }

    @Test("drop=after:2 closes the socket without an answer, a GOAWAY or close_notify")
    func drop() throws {
        let fixture = try MockServerFixture { $0.faults = try FaultPlan(parsing: ["drop=after:2"]) }
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        let first = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[first] != nil && client.session.availableStreamSlots > 1 }
        let second = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[second] != nil }
        let third = try client.send(authorization: fixture.authorization)
        client.spin { client.isClosed }
        #expect(client.answers[second]?.status == 200)
        #expect(client.answers[third] == nil)
        #expect(client.failures[third] == .connectionEndedBeforeAnswer)
        #expect(client.goaway == nil)
        #expect(client.closeError != nil)
        let counters = fixture.server.counters()
        #expect(counters.drops == 1)
        #expect(counters.answered == 2)
        #expect(fixture.server.openConnectionCount() == 0)
    }

    @Test("latency=40ms holds every answer back and keeps them in request order")
    func latency() throws {
        let fixture = try MockServerFixture { $0.faults = try FaultPlan(parsing: ["latency=40ms"]) }
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        let first = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[first] != nil && client.session.availableStreamSlots > 1 }
        let start = EventLoopInstant.now()
        let tags = try (0..<20).map { _ in try client.send(authorization: fixture.authorization) }
        client.spin { client.finishedCount == 21 }
        #expect(EventLoopInstant.now().seconds(since: start) >= 0.04)
        #expect(client.answerOrder == [first] + tags)
        #expect(tags.allSatisfy { client.answers[$0]?.status == 200 })
        #expect(fixture.server.counters().delayedAnswers == 21)
    }

    @Test("lower-streams=after:2:to:5 lowers the announced limit after the second answer")
    func lowerStreams() throws {
        let fixture = try MockServerFixture { $0.faults = try FaultPlan(parsing: ["lower-streams=after:2:to:5"]) }
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        let first = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[first] != nil && client.session.availableStreamSlots > 1 }
        let second = try client.send(authorization: fixture.authorization)
        client.spin { client.answers[second] != nil && client.limits.last == 5 }
        // The first SETTINGS (1) may or may not be reported before the raise; then raised, then lowered.
        #expect(Array(client.limits.drop(while: { $0 == 1 })) == [1000, 5], "\(client.limits)")
        #expect(fixture.server.counters().streamLimitLowerings == 1)
    }
}
