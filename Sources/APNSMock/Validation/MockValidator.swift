import APNSCore
import APNSCrypto
import APNSHTTP2
import Foundation

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

    /// The configuration requests are checked against.
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

    /// A validator for `configuration`; throws when the configuration is invalid.
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
            response = .rejected(
                rejection.reason, apnsID: apnsID, timestampMilliseconds: rejection.timestampMilliseconds)
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
    private mutating func accepted(apnsID: APNSID, authority: Authority, connection: inout MockConnectionState)
        -> MockResponse
    {
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
/// APNs documents no reason for it, and `PayloadEmpty` is the nearest documented input-error reason. A
/// `liveactivity` payload without the fields ActivityKit needs is accepted: APNs documents no rejection for them
/// (the device drops such an update; docs/APNS.md, "Live Activity payloads").
extension MockValidator {
    static func checkPayload(_ body: [UInt8], pushType: PushType, priority: Priority?) -> Rejection? {
        do throws(InputError) {
            try PayloadRules.validate(
                JSONScanner(body), range: 0..<body.count, pushType: pushType, priority: priority,
                liveActivityFields: false)
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

// MARK: - Request

/// The request-shape checks that need no credentials: method, path and device token, duplicate headers, and the
/// syntax of `apns-id`, `apns-push-type`, `apns-priority`, `apns-expiration` and `apns-collapse-id` (each by the
/// same core type the client validates with, so the two agree on every value; docs/FILES.md, "Header values").
extension MockValidator {
    /// The headers of a request whose shape is valid, parsed.
    struct ShapedRequest {
        /// The device token in its stored form (lowercase hex), as the path carried it or lowered from it.
        let token: ArraySlice<UInt8>
        let fields: RequestHeaderFields
        /// nil when the header is absent (inferred from the topic later).
        let pushType: PushType?
        /// nil when the header is absent (APNs's default, 10).
        let priority: Priority?
    }

    static let pathPrefix: StaticString = "/3/device/"

    /// The request's `apns-id`: nil when absent, `.success` when valid (echoed in every answer, errors included),
    /// `.failure` when present but not a UUID.
    static func requestID(_ request: MockRequest, _ fields: RequestHeaderFields) -> Result<APNSID, InputError>? {
        guard let index = fields.apnsID else { return nil }
        let text = String(decoding: request.fields.value(at: index), as: UTF8.self)
        do throws(InputError) {
            return .success(try APNSID(parsing: text))
        } catch {
            return .failure(error)
        }
    }

    /// Checks method, path, duplicates and header syntax, in that order. `requestID` is `requestID(_:_:)`.
    static func checkShape(
        _ request: MockRequest,
        _ fields: RequestHeaderFields,
        requestID: Result<APNSID, InputError>?
    ) -> Result<ShapedRequest, Rejection> {
        let list = request.fields
        guard let method = fields.method, list.value(at: method, is: "POST") else {
            return .failure(.init(.methodNotAllowed))
        }
        let token: ArraySlice<UInt8>
        guard let path = fields.path, list.value(at: path, startsWith: pathPrefix) else {
            return .failure(.init(.badPath))
        }
        switch deviceToken(list.value(at: path).dropFirst(pathPrefix.utf8CodeUnitCount)) {
        case .success(let parsed): token = parsed
        case .failure(let rejection): return .failure(rejection)
        }
        guard !fields.hasDuplicates else { return .failure(.init(.duplicateHeaders)) }
        if case .failure = requestID { return .failure(.init(.badMessageID)) }
        var pushType: PushType?
        if let index = fields.pushType {
            pushType = PushType(rawValue: String(decoding: list.value(at: index), as: UTF8.self))
            guard pushType != nil else { return .failure(.init(.invalidPushType)) }
        }
        var priority: Priority?
        if let index = fields.priority {
            priority = try? Priority(parsing: String(decoding: list.value(at: index), as: UTF8.self))
            guard priority != nil else { return .failure(.init(.badPriority)) }
        }
        if let index = fields.expiration {
            guard (try? Expiration(parsing: String(decoding: list.value(at: index), as: UTF8.self))) != nil else {
                return .failure(.init(.badExpirationDate))
            }
        }
        if let index = fields.collapseID {
            guard (try? CollapseID(validatingBytes: Array(list.value(at: index)))) != nil else {
                return .failure(.init(.badCollapseID))
            }
        }
        return .success(ShapedRequest(token: token, fields: fields, pushType: pushType, priority: priority))
    }

    /// The token after `/3/device/` (anything else is `BadPath`): empty is `MissingDeviceToken`; a token that is not
    /// plain hex (no spaces, brackets or query) or breaks `DeviceToken`'s length rules is `BadDeviceToken`.
    /// A token already in its stored form is passed on as it is (the usual case: nothing is made).
    static func deviceToken(_ hex: ArraySlice<UInt8>) -> Result<ArraySlice<UInt8>, Rejection> {
        guard !hex.isEmpty else { return .failure(.init(.missingDeviceToken)) }
        if DeviceToken.isStoredForm(hex) { return .success(hex) }
        // The parse also takes the grouped `<0123abcd 4567ef01>` form some exports print, which a path never
        // carries: a token as long as its text had nothing but hex digits (one pass, no second scan).
        guard let token = try? DeviceToken(parsingBytes: hex), token.hex.utf8.count == hex.count else {
            return .failure(.init(.badDeviceToken))
        }
        return .success(Array(token.hex.utf8)[...])
    }
}

// MARK: - Authorization

/// Authentication, after the request-shape checks: a provider token in `authorization`, else the client
/// certificate of the TLS handshake, else 403 `MissingProviderToken`.
///
/// A client certificate without any topic is 403 `BadCertificate`; one not valid for the mock's environment
/// (development mode or production) is 403 `BadCertificateEnvironment`.
///
/// A token is checked in this order, each failure answering 403 unless noted:
/// 1. `bearer <JWT>`, the JWT as `ProviderTokenVerifier.parse` reads it (three base64url parts, `"alg":"ES256"`,
///    a `kid`, a string `iss` and an integer `iat`, a 64-byte `r||s` signature); nothing after `bearer` is
///    `MissingProviderToken`, any other malformed value `InvalidProviderToken`. An `iat` written as a string of
///    digits is accepted as APNs accepts it, unless `MockConfiguration.strictIssuedAt` (then `InvalidProviderToken`);
/// 2. the `kid` is a configured key, else `InvalidProviderToken`;
/// 3. the signature verifies with that key, else `InvalidProviderToken`;
/// 4. `iss` is the key's team, else `UnrelatedKeyIdInToken` (the key belongs to another team);
/// 5. `iat` is at most `allowedClockSkewSeconds` in the future, else `InvalidProviderToken`;
/// 6. `iat` is at most `tokenLifetimeSeconds` (one hour) old, else `ExpiredProviderToken`;
/// 7. `iss` is the team already bound to this connection, if any, else `InvalidProviderToken` (one team per
///    connection);
/// 8. a token that replaces the connection's current one must be issued at least `tokenUpdateIntervalSeconds`
///    (20 minutes) after it, else 429 `TooManyProviderTokenUpdates` (measured between the tokens' `iat`s, so a
///    client that shares one token across connections and re-signs it at 50 minutes is never punished; right after
///    an injected `ExpiredProviderToken` the next change is allowed at once, on every connection whose current
///    token that answer declared expired).
///
/// The connection keeps its current token (and the one before it, still honoured for requests rendered before
/// the change) by its exact header bytes and its JWT: a repeat skips parsing and signature verification and only
/// re-checks the age (rule 6).
extension MockValidator {
    /// Who the request speaks for.
    enum Authority {
        case token(keyID: String, teamID: String)
        case certificate(topics: [String])
    }

    mutating func authenticate(
        _ request: MockRequest,
        _ fields: RequestHeaderFields,
        now: Int64,
        connection: inout MockConnectionState,
        actions: inout [MockConnectionAction]
    ) -> Result<Authority, Rejection> {
        guard let index = fields.authorization else {
            guard let certificate = connection.clientCertificate else { return .failure(.init(.missingProviderToken)) }
            guard !certificate.topics.isEmpty else { return .failure(.init(.badCertificate)) }
            let environmentFits =
                configuration.developmentMode ? certificate.allowsDevelopment : certificate.allowsProduction
            guard environmentFits else { return .failure(.init(.badCertificateEnvironment)) }
            markAuthenticated(&connection, &actions)
            return .success(.certificate(topics: certificate.topics))
        }
        if let known = connection.currentToken, request.fields.value(at: index, equals: known.authorization) {
            return checkAge(issuedAt: known.issuedAt, now: now).map { .token(keyID: known.keyID, teamID: known.teamID) }
        }
        if let known = connection.previousToken, request.fields.value(at: index, equals: known.authorization) {
            return checkAge(issuedAt: known.issuedAt, now: now).map { .token(keyID: known.keyID, teamID: known.teamID) }
        }
        let value = Array(request.fields.value(at: index))

        let jwt: [UInt8]
        do throws(BearerToken.Failure) {
            jwt = try BearerToken.jwt(in: value)
        } catch {
            return .failure(.init(error == .missing ? .missingProviderToken : .invalidProviderToken))
        }
        // The same token written differently ("Bearer  <jwt>") is still the same token, not a change.
        for known in [connection.currentToken, connection.previousToken].compactMap({ $0 }) where known.jwt == jwt {
            return checkAge(issuedAt: known.issuedAt, now: now).map { .token(keyID: known.keyID, teamID: known.teamID) }
        }
        guard let parts = try? ProviderTokenVerifier.parse(jwt) else { return .failure(.init(.invalidProviderToken)) }
        if parts.issuedAtIsString && configuration.strictIssuedAt { return .failure(.init(.invalidProviderToken)) }
        guard let key = keysByID[parts.keyID] else { return .failure(.init(.invalidProviderToken)) }
        counters.recordSignatureVerification()
        guard key.publicKey.isValidSignature(parts.signature, for: parts.signingInput) else {
            return .failure(.init(.invalidProviderToken))
        }
        guard parts.teamID == key.teamID else { return .failure(.init(.unrelatedKeyIDInToken)) }
        guard parts.issuedAt <= now + configuration.allowedClockSkewSeconds else {
            return .failure(.init(.invalidProviderToken))
        }
        if case .failure(let rejection) = checkAge(issuedAt: parts.issuedAt, now: now) { return .failure(rejection) }
        if let team = connection.boundTeamID, team != parts.teamID { return .failure(.init(.invalidProviderToken)) }

        if let current = connection.currentToken {
            let interval = parts.issuedAt - current.issuedAt
            let declaredExpired = connection.tokenRefreshPermitted || tokensDeclaredExpired.contains(current.jwt)
            guard declaredExpired || interval >= configuration.tokenUpdateIntervalSeconds else {
                return .failure(.init(.tooManyProviderTokenUpdates))
            }
            connection.previousToken = current
            connection.tokenChangeCount += 1
            // Another key of the team may cover other topics: the topic accepted so far is checked again.
            if current.keyID != parts.keyID { connection.acceptedTopicPushType = nil }
            connection.tokenRefreshPermitted = false
        }
        connection.currentToken = MockConnectionState.VerifiedToken(
            authorization: value, jwt: jwt, keyID: parts.keyID, teamID: parts.teamID, issuedAt: parts.issuedAt
        )
        connection.boundTeamID = parts.teamID
        markAuthenticated(&connection, &actions)
        return .success(.token(keyID: parts.keyID, teamID: parts.teamID))
    }

    private func checkAge(issuedAt: Int64, now: Int64) -> Result<Void, Rejection> {
        now - issuedAt > configuration.tokenLifetimeSeconds ? .failure(.init(.expiredProviderToken)) : .success(())
    }

    /// The first authenticated request raises the stream limit from the initial value to the maximum.
    private func markAuthenticated(_ connection: inout MockConnectionState, _ actions: inout [MockConnectionAction]) {
        guard !connection.isAuthenticated else { return }
        connection.isAuthenticated = true
        let maximum = configuration.maxConcurrentStreams
        if connection.streamLimit < maximum {
            connection.streamLimit = maximum
            actions.append(.raiseStreamLimit(maximum))
        }
    }
}

// MARK: - Topic

/// The topic checks, after authentication: `MissingTopic`, `BadTopic`, `TopicDisallowed`, and `InvalidPushType`
/// for a topic whose suffix does not fit the push type.
///
/// A topic is a bundle id plus the suffix its push type requires (`PushType.topicSuffix`). The bundle id must be
/// allowed: for token auth, by `MockConfiguration.allowedBundleIDs(forKey:team:)` (the key's own bundle ids when it
/// is topic-scoped, else its team's; empty: any); for certificate auth,
/// by the certificate's topics (the topic itself, or its bundle id, must be one of them). Then the suffix must be
/// the one the push type requires; a topic carrying another push type's suffix (or none where one is required)
/// answers 400 `InvalidPushType`: the push type does not fit the topic. (Choice: APNs documents `BadTopic` only as
/// "the apns-topic is invalid"; `InvalidPushType` names the mismatch better, and `BadTopic` stays for topics that
/// are not a well-formed topic at all.) Without `apns-push-type`, the push type is inferred from the topic's suffix
/// (alert when it has none), as APNs did before the header existed.
extension MockValidator {
    /// The topic the request goes to and its push type, once checked.
    struct TopicCheck {
        let topic: [UInt8]
        let pushType: PushType
    }

    func checkTopic(
        _ request: MockRequest,
        _ shaped: ShapedRequest,
        authority: Authority,
        connection: inout MockConnectionState
    ) -> Result<TopicCheck, Rejection> {
        let list = request.fields
        var byToken = false
        if case .token = authority { byToken = true }
        // The campaign's topic again: compared in place, nothing copied.
        if let cached = connection.acceptedTopicPushType, connection.acceptedTopicByToken == byToken,
            let index = shaped.fields.topic, list.valueCount(at: index) > 0,
            list.value(at: index, equals: connection.acceptedTopic),
            shaped.fields.pushType.map({ list.value(at: $0, equals: connection.acceptedTopicPushTypeHeader) })
                ?? connection.acceptedTopicPushTypeHeader.isEmpty
        {
            return .success(TopicCheck(topic: connection.acceptedTopic, pushType: cached))
        }
        var topic: [UInt8] = []
        if let index = shaped.fields.topic { topic = Array(list.value(at: index)) }
        if topic.isEmpty {
            guard case .certificate(let topics) = authority, topics.count == 1, let only = topics.first else {
                return .failure(.init(.missingTopic))
            }
            topic = Array(only.utf8)
        }
        let pushTypeBytes = shaped.fields.pushType.map { Array(list.value(at: $0)) } ?? []
        // The same check on the topic in effect (a certificate's only topic stands in for a missing header).
        if let cached = connection.acceptedTopicPushType, connection.acceptedTopicByToken == byToken,
            connection.acceptedTopic == topic, connection.acceptedTopicPushTypeHeader == pushTypeBytes
        {
            return .success(TopicCheck(topic: topic, pushType: cached))
        }
        let text = String(decoding: topic, as: UTF8.self)
        guard (try? Topic(validating: text)) != nil else { return .failure(.init(.badTopic)) }
        let suffixType = Self.pushTypeBySuffix(of: text)
        let bundleID = suffixType.map { String(text.dropLast($0.topicSuffix?.utf8.count ?? 0)) } ?? text
        guard isAllowed(topic: text, bundleID: bundleID, authority: authority) else {
            return .failure(.init(.topicDisallowed))
        }
        let pushType = shaped.pushType ?? suffixType ?? .alert
        guard pushType.topicSuffix == suffixType?.topicSuffix else { return .failure(.init(.invalidPushType)) }
        connection.acceptedTopic = topic
        connection.acceptedTopicByToken = byToken
        connection.acceptedTopicPushTypeHeader = pushTypeBytes
        connection.acceptedTopicPushType = pushType
        return .success(TopicCheck(topic: topic, pushType: pushType))
    }

    private func isAllowed(topic: String, bundleID: String, authority: Authority) -> Bool {
        switch authority {
        case .certificate(let topics):
            return topics.contains(topic) || topics.contains(bundleID)
        case .token(let keyID, let teamID):
            let allowed = configuration.allowedBundleIDs(forKey: keyID, team: teamID)
            return allowed.isEmpty || allowed.contains(bundleID)
        }
    }

    /// The push type whose required suffix the topic ends with (after a non-empty bundle id), if any.
    static func pushTypeBySuffix(of topic: String) -> PushType? {
        for type in PushType.allCases {
            guard let suffix = type.topicSuffix else { continue }
            if topic.utf8.count > suffix.utf8.count, topic.hasSuffix(suffix) { return type }
        }
        return nil
    }
}

// MARK: - MockClock

/// Where the validator gets the time (UNIX epoch seconds): the system clock, or a fixed instant tests move by hand
/// to drive token ages and the 20-minute rule.
public enum MockClock: Sendable, Hashable {
    case system
    case fixed(epochSeconds: Int64)

    /// The current time in epoch seconds.
    @inline(__always)
    public func epochSeconds() -> Int64 {
        switch self {
        case .system: return Int64(Date().timeIntervalSince1970)
        case .fixed(let seconds): return seconds
        }
    }

    /// The same clock moved forward (a fixed clock) or unchanged (the system clock).
    public func advanced(by seconds: Int64) -> MockClock {
        switch self {
        case .system: return .system
        case .fixed(let now): return .fixed(epochSeconds: now + seconds)
        }
    }
}
