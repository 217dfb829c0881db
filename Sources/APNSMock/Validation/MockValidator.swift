import APNSCore

/// The mock's request handler: validates one request exactly as APNs does, answers with APNs's statuses and
/// reasons, applies the configured faults, keeps the counters, and tells the glue what to do with the connection.
///
/// Order of checks (the first failure answers):
/// 1. `:method` is POST, else 405 `MethodNotAllowed`;
/// 2. `:path` is `/3/device/<token>`, else 404 `BadPath`; empty token 400 `MissingDeviceToken`; a token that is
///    not plain even-length hex of 16 to 200 bytes 400 `BadDeviceToken`;
/// 3. no `apns-*` or `authorization` header twice, else 400 `DuplicateHeaders`;
/// 4. header syntax: `apns-id` a UUID (`BadMessageId`), `apns-push-type` known (`InvalidPushType`),
///    `apns-priority` 10, 5 or 1 (`BadPriority`), `apns-expiration` digits (`BadExpirationDate`),
///    `apns-collapse-id` UTF-8 of at most 64 bytes, no blank at either end, no control character (`BadCollapseId`);
/// 5. authentication (see `authenticate`): the first request that passes raises the stream limit;
/// 6. topic (see `checkTopic`): `MissingTopic`, `BadTopic`, `TopicDisallowed`, `InvalidPushType`;
/// 7. payload (see `checkPayload`): `PayloadEmpty`, 413 `PayloadTooLarge`, `BadPriority`;
/// 8. token registry (see `TokenRegistry`): 410 `Unregistered` / `ExpiredToken` with timestamp, 400
///    `DeviceTokenNotForTopic`, 400 `BadDeviceToken`;
/// 9. 200, unless a fault replaces it.
///
/// Headers are checked before credentials because APNs can judge them from the HEADERS frame alone (the
/// established mock servers do the same); credentials come before the topic because whether a topic is allowed
/// depends on the key or certificate; the payload comes after the topic because the push type fixes its limit.
///
/// Every answer carries the request's `apns-id` if it had a valid one, else a generated lowercase UUID; in
/// development mode 200 answers also carry `apns-unique-id`.
public struct MockValidator: Sendable {
    /// Why a request is rejected.
    struct Rejection: Error {
        let reason: APNSReason
        let timestampMilliseconds: Int64?

        init(_ reason: APNSReason, timestampMilliseconds: Int64? = nil) {
            self.reason = reason
            self.timestampMilliseconds = timestampMilliseconds
        }
    }

    /// The GOAWAY debug data APNs sends when it shuts a connection down.
    public static let shutdownDebugData: [UInt8] = Array(#"{"reason":"Shutdown"}"#.utf8)

    public let configuration: MockConfiguration
    /// The time source; tests move a `.fixed` clock to drive token ages.
    public var clock: MockClock
    /// What has happened so far.
    public internal(set) var counters = MockCounters()

    let keysByID: [String: MockProviderKey]
    private var faults: FaultInjector
    private var random: SplitMix64
    private var nextConnectionID = 1
    /// The JWTs an injected `ExpiredProviderToken` declared expired: any connection still using one may change its
    /// token at once, as after that answer on its own connection (a client shares one token across connections).
    var tokensDeclaredExpired = Set<[UInt8]>()

    public init(configuration: MockConfiguration, clock: MockClock = .system) throws(MockConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        self.clock = clock
        keysByID = Dictionary(configuration.keys.map { ($0.keyID, $0) }, uniquingKeysWith: { first, _ in first })
        faults = FaultInjector(plan: configuration.faults, seed: configuration.seed)
        random = SplitMix64(seed: configuration.seed ^ 0x1D5_0F_A9_15)
    }

    /// State for a newly accepted connection. Pass the client certificate when the client presented one (see
    /// `MockClientCertificate` for what to extract). The glue announces `configuration.initialConcurrentStreams`
    /// in its first SETTINGS.
    public mutating func openConnection(clientCertificate: MockClientCertificate? = nil) -> MockConnectionState {
        defer { nextConnectionID += 1 }
        counters.recordConnectionOpened()
        return MockConnectionState(
            id: nextConnectionID,
            clientCertificate: clientCertificate,
            initialStreamLimit: configuration.initialConcurrentStreams
        )
    }

    /// Decides the answer to one complete request (headers and body received) and the connection actions.
    public mutating func handle(_ request: MockRequest, connection: inout MockConnectionState) -> MockDecision {
        let decision = decide(request, connection: &connection)
        counters.record(decision, connectionID: connection.id)
        return decision
    }

    private mutating func decide(_ request: MockRequest, connection: inout MockConnectionState) -> MockDecision {
        connection.requestCount += 1
        if connection.isDropped { return MockDecision(response: nil, actions: [.dropConnection]) }
        if let last = connection.goawayLastStreamID, request.streamID > last {
            return MockDecision(response: nil, actions: [.refuseStream])
        }
        if faults.dropsConnection(answeredOnConnection: connection.answeredCount) {
            connection.isDropped = true
            return MockDecision(response: nil, actions: [.dropConnection])
        }

        var actions: [MockConnectionAction] = []
        let fields = RequestHeaderFields(scanning: request.fields)
        let requestID = Self.requestID(request, fields)
        let outcome = validate(request, fields, requestID: requestID, connection: &connection, actions: &actions)
        let apnsID: APNSID
        if case .success(let id) = requestID { apnsID = id } else { apnsID = APNSID.random(using: &random) }

        let response: MockResponse
        switch outcome {
        case .failure(let rejection):
            response = .rejected(rejection.reason, apnsID: apnsID, timestampMilliseconds: rejection.timestampMilliseconds)
        case .success(let authority):
            response = accepted(apnsID: apnsID, authority: authority, connection: &connection)
        }
        connection.answeredCount += 1
        connection.highestAnsweredStreamID = max(connection.highestAnsweredStreamID, request.streamID)

        if let delay = faults.latencyMilliseconds() { actions.insert(.delay(milliseconds: delay), at: 0) }
        if let limit = faults.loweredStreamLimit(answeredOnConnection: connection.answeredCount) {
            connection.streamLimit = limit
            actions.append(.lowerStreamLimit(limit))
        }
        if connection.goawayLastStreamID == nil, faults.sendsGoaway(answeredOnConnection: connection.answeredCount) {
            let last = connection.highestAnsweredStreamID
            connection.goawayLastStreamID = last
            actions.append(.goaway(lastStreamID: last, errorCode: 0, debugData: Self.shutdownDebugData))
        }
        return MockDecision(response: response, actions: actions)
    }

    /// The 200 answer, or the fault answer that replaces it.
    private mutating func accepted(apnsID: APNSID, authority: Authority, connection: inout MockConnectionState) -> MockResponse {
        var tokenAuthenticated = false
        if case .token = authority { tokenAuthenticated = true }
        if let fault = faults.replacementAnswer(tokenAuthenticated: tokenAuthenticated) {
            counters.recordFaultAnswer()
            if fault == .expiredProviderToken {
                connection.tokenRefreshPermitted = true
                if let token = connection.currentToken { tokensDeclaredExpired.insert(token.jwt) }
            }
            return .rejected(fault.reason, apnsID: apnsID)
        }
        let uniqueID = configuration.developmentMode ? APNSID.random(using: &random) : nil
        return .accepted(apnsID: apnsID, uniqueID: uniqueID)
    }

    /// Every check, in order; success carries who the request spoke for.
    private mutating func validate(
        _ request: MockRequest,
        _ fields: RequestHeaderFields,
        requestID: Result<APNSID, InputError>?,
        connection: inout MockConnectionState,
        actions: inout [MockConnectionAction]
    ) -> Result<Authority, Rejection> {
        let shaped: ShapedRequest
        switch Self.checkShape(request, fields, requestID: requestID) {
        case .success(let value): shaped = value
        case .failure(let rejection): return .failure(rejection)
        }
        let authority: Authority
        switch authenticate(request, fields, now: clock.epochSeconds(), connection: &connection, actions: &actions) {
        case .success(let value): authority = value
        case .failure(let rejection): return .failure(rejection)
        }
        let topic: TopicCheck
        switch checkTopic(request, shaped, authority: authority, connection: &connection) {
        case .success(let value): topic = value
        case .failure(let rejection): return .failure(rejection)
        }
        if let rejection = Self.checkPayload(request.body, pushType: topic.pushType, priority: shaped.priority) {
            return .failure(rejection)
        }
        if let rejection = configuration.registry.rejection(forStoredForm: shaped.token, topicBytes: topic.topic) {
            return .failure(Rejection(rejection.reason, timestampMilliseconds: rejection.timestampMilliseconds))
        }
        return .success(authority)
    }
}

/// The payload checks, after the topic (which fixes the push type and so the size limit), by `PayloadRules`:
/// empty → 400 `PayloadEmpty`; over 4096 bytes (5120 for voip) → 413 `PayloadTooLarge`; priority 10 (or no
/// priority) with an `aps` holding only `content-available` → 400 `BadPriority` (Apple calls that combination an
/// error; `BadPriority` is the reason that names it). A body that is not a JSON object answers 400 `PayloadEmpty`:
/// APNs documents no reason for it, and `PayloadEmpty` is the nearest documented input-error reason.
extension MockValidator {
    static func checkPayload(_ body: [UInt8], pushType: PushType, priority: Priority?) -> Rejection? {
        do throws(InputError) {
            try PayloadRules.validate(JSONScanner(body), range: 0..<body.count, pushType: pushType, priority: priority)
            return nil
        } catch {
            switch error.code {
            case .payloadTooLarge: return Rejection(.payloadTooLarge)
            case .priorityForbiddenForBackground: return Rejection(.badPriority)
            default: return Rejection(.payloadEmpty)
            }
        }
    }
}
