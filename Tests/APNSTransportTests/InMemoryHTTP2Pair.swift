import APNSCore

@testable import APNSHTTP2
@testable import APNSTransport

/// A client event copied out of the session's event buffer, so tests can keep it.
enum ClientRecord: Equatable {
    case response(tag: UInt64, streamID: Int32, status: Int, apnsID: String?, apnsUniqueID: String?, body: [UInt8])
    case failed(tag: UInt64, streamID: Int32, failure: TransportFailure)
    case goaway(
        lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8], unprocessed: [UInt64], inDoubt: [UInt64])
    case limit(Int)
    case pingAck(UInt64)
    case connectionError(HTTP2Error)

    init(_ event: HTTP2ClientEvent) {
        switch event {
        case .response(let response):
            self = .response(
                tag: response.tag, streamID: response.streamID, status: response.status,
                apnsID: response.apnsID.map { String(decoding: $0, as: UTF8.self) },
                apnsUniqueID: response.apnsUniqueID.map { String(decoding: $0, as: UTF8.self) },
                body: Array(response.body))
        case .streamFailed(let tag, let streamID, let failure):
            self = .failed(tag: tag, streamID: streamID, failure: failure)
        case .goawayReceived(let goaway):
            self = .goaway(
                lastStreamID: goaway.lastStreamID, errorCode: goaway.errorCode, debugData: Array(goaway.debugData),
                unprocessed: goaway.unprocessedTags, inDoubt: goaway.inDoubtTags)
        case .remoteSettingsChanged(let limit): self = .limit(limit)
        case .pingAcknowledged(let payload): self = .pingAck(payload)
        case .connectionError(let error): self = .connectionError(error)
        }
    }

    /// The tag of a per-stream terminal event (response or failure).
    var terminalTag: UInt64? {
        switch self {
        case .response(let tag, _, _, _, _, _), .failed(let tag, _, _): return tag
        default: return nil
        }
    }
}

/// Joins an `HTTP2ClientSession` and an `HTTP2ServerSession` through two byte buffers and steps them until neither
/// has anything left to say (like `interactInMemory` in swift-nio-http2's TestUtilities). Bytes can be delivered in
/// small chunks so frames arrive split. Hooks let a test answer requests, submit more, and check invariants after
/// every delivery to the server.
final class InMemoryHTTP2Pair {
    let client: HTTP2ClientSession
    let server: HTTP2ServerSession
    /// Bytes per `receive` call (frames split across calls when small).
    var chunkSize: Int
    private var clientOutput: [UInt8] = []
    private var serverOutput: [UInt8] = []
    /// Every client event so far, in order.
    private(set) var clientRecords: [ClientRecord] = []
    /// Every server event so far, in order.
    private(set) var serverEvents: [HTTP2ServerEvent] = []
    /// Total bytes moved client to server and server to client.
    private(set) var bytesToServer = 0
    private(set) var bytesToClient = 0

    /// Runs for each server event as it is drained (it may respond, reset, change settings…).
    var onServerEvent: (HTTP2ServerEvent) -> Void = { _ in }
    /// Runs for each client event as it is drained, while its byte slices are still borrowed from the session.
    var onClientEvent: (HTTP2ClientEvent) -> Void = { _ in }
    /// Runs for each client event as it is drained (it may submit more requests…).
    var onClientRecord: (ClientRecord) -> Void = { _ in }
    /// Runs after every chunk the server receives.
    var afterServerReceive: () -> Void = {}
    /// Runs at the start of every step, before the client produces output (a place to submit requests).
    var beforeStep: () -> Void = {}

    init(
        client: HTTP2ClientConfiguration = HTTP2ClientConfiguration(),
        server: HTTP2ServerConfiguration = HTTP2ServerConfiguration(),
        chunkSize: Int = 1 << 20
    ) throws {
        self.client = try HTTP2ClientSession(configuration: client)
        self.server = try HTTP2ServerSession(configuration: server)
        self.chunkSize = chunkSize
    }

    /// One exchange in each direction. Returns whether any bytes moved.
    @discardableResult
    func step() -> Bool {
        beforeStep()
        var moved = false
        client.produceOutput(into: &clientOutput)
        if !clientOutput.isEmpty {
            moved = true
            bytesToServer += clientOutput.count
            deliver(clientOutput) {
                server.receive($0)
                afterServerReceive()
            }
            clientOutput.removeAll(keepingCapacity: true)
        }
        drainServer()
        server.produceOutput(into: &serverOutput)
        if !serverOutput.isEmpty {
            moved = true
            bytesToClient += serverOutput.count
            deliver(serverOutput) { client.receive($0) }
            serverOutput.removeAll(keepingCapacity: true)
        }
        drainClient()
        return moved
    }

    /// Steps until no bytes move (or `maxSteps`). Returns the number of steps taken.
    @discardableResult
    func interact(maxSteps: Int = 100_000) -> Int {
        var steps = 0
        while steps < maxSteps {
            steps += 1
            if !step() { break }
        }
        return steps
    }

    /// Moves what the server has to say to the client, without letting the client speak first.
    func flushServerToClient() {
        server.produceOutput(into: &serverOutput)
        bytesToClient += serverOutput.count
        deliver(serverOutput) { client.receive($0) }
        serverOutput.removeAll(keepingCapacity: true)
        drainClient()
    }

    /// Client events drained outside `step` (after `connectionClosed`, `terminate`…).
    func drainClient() {
        client.drainEvents { event in
            onClientEvent(event)
            let record = ClientRecord(event)
            clientRecords.append(record)
            onClientRecord(record)
        }
    }

    func drainServer() {
        server.drainEvents { event in
            serverEvents.append(event)
            onServerEvent(event)
        }
    }

    /// The complete requests the server has seen.
    var serverRequests: [HTTP2ServerRequest] {
        serverEvents.compactMap { if case .request(let request) = $0 { return request } else { return nil } }
    }

    /// Tags of every per-stream terminal client event, in order.
    var terminalTags: [UInt64] { clientRecords.compactMap(\.terminalTag) }

    private func deliver(_ bytes: [UInt8], to receive: (RawSpan) -> Void) {
        let all = bytes.span.bytes
        var offset = 0
        while offset < all.byteCount {
            let end = min(all.byteCount, offset + chunkSize)
            receive(all.extracting(offset..<end))
            offset = end
        }
    }
}

/// Requests and answers shaped like APNs traffic, for the HTTP/2 tests.
enum APNSLikeTraffic {
    static let authority = "api.sandbox.push.apple.com"

    /// The shared block: `:method POST`, `:scheme https`, `:authority`, authorization, topic, push type.
    static func block(token: String = "eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMzQ1NjcifQ.test.signature") throws
        -> HTTP2HeaderBlock
    {
        try HTTP2HeaderBlock(
            authority: authority,
            fields: [
                ("authorization", "bearer \(token)"), ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
            ])
    }

    /// The apns-id a test derives from a tag, so answers can be matched to requests.
    static func apnsID(for tag: UInt64) -> String {
        let hex = String(tag, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    static func deviceHex(for tag: UInt64) -> String {
        let hex = String(tag, radix: 16)
        return String(repeating: "a", count: 64 - hex.count) + hex
    }

    /// Per-request fields: `:path`, `apns-id`, `apns-expiration`, `apns-priority`.
    static func fill(_ fields: inout HTTP2HeaderFieldList, tag: UInt64) {
        fields.removeAll()
        fields.append(name: ":path", prefix: "/3/device/", value: deviceHex(for: tag).utf8)
        fields.append(name: "apns-id", value: apnsID(for: tag).utf8)
        fields.append(name: "apns-expiration", decimal: 0)
        fields.append(name: "apns-priority", decimal: 10)
    }

    static let payload = Array(#"{"aps":{"alert":"hello"}}"#.utf8)

    /// Answers a request 200 with its own apns-id (what APNs does).
    static func answer(_ request: HTTP2ServerRequest, on server: HTTP2ServerSession) throws {
        var fields = HTTP2HeaderFieldList()
        if let apnsID = request.fields.firstValue(of: "apns-id") { fields.append(name: "apns-id", value: apnsID) }
        try server.respond(to: request.streamID, status: 200, fields: fields, body: [])
    }

    static func text(_ bytes: ArraySlice<UInt8>?) -> String? {
        bytes.map { String(decoding: $0, as: UTF8.self) }
    }
}
