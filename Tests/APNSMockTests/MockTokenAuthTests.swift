import APNSCore
import Foundation
import Testing

@testable import APNSCrypto
@testable import APNSMock

/// Token-based trust against real ES256 tokens signed by APNSCrypto with keys generated here.
@Suite("Validator: provider tokens")
struct MockTokenAuthTests {
    typealias Support = MockTestSupport

    /// Two teams, one key each, plus a stray key nobody configured.
    struct Keys {
        let teamA = "TEAMAAAAA1"
        let teamB = "TEAMBBBBB2"
        let keyA = "KEYAAAAAA1"
        let keyB = "KEYBBBBBB2"
        let privateA: ProviderKey
        let privateB: ProviderKey
        let stray: ProviderKey

        init() throws {
            privateA = try ProviderKey.generate()
            privateB = try ProviderKey.generate()
            stray = try ProviderKey.generate()
        }

        var configuration: MockConfiguration {
            MockConfiguration(keys: [
                MockProviderKey(keyID: keyA, teamID: teamA, publicKey: privateA.publicKey),
                MockProviderKey(keyID: keyB, teamID: teamB, publicKey: privateB.publicKey),
            ])
        }

        /// `bearer <jwt>` signed by `key`, naming `keyID` and `teamID`.
        func bearer(_ key: ProviderKey, keyID: String, teamID: String, issuedAt: Int64) throws -> String {
            try "bearer " + ProviderTokenSigner(key: key, keyID: keyID, teamID: teamID).sign(issuedAt: issuedAt)
        }

        /// `bearer <jwt>` for key A whose claims are exactly `claims` (to write `iat` as APNSwift 2022-2026 did).
        func bearerA(claims: String) throws -> String {
            var token = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(keyA)"}"#.utf8)) + "."
            token += Base64URL.encode(Array(claims.utf8))
            let signature = try privateA.key.signES256(Array(token.utf8))
            return "bearer " + token + "." + Base64URL.encode(signature)
        }

        func bearerA(issuedAt: Int64) throws -> String {
            try bearer(privateA, keyID: keyA, teamID: teamA, issuedAt: issuedAt)
        }
        func bearerB(issuedAt: Int64) throws -> String {
            try bearer(privateB, keyID: keyB, teamID: teamB, issuedAt: issuedAt)
        }
    }

    private static func request(_ authorization: String?, streamID: Int32 = 1, topic: String? = Support.topic)
        -> MockRequest
    {
        var headers: [(String, String)] = [("apns-push-type", "alert")]
        if let topic { headers.append(("apns-topic", topic)) }
        if let authorization { headers.append(("authorization", authorization)) }
        return Support.request(streamID: streamID, headers: headers)
    }

    private func setup(_ keys: Keys, faults: [String] = []) throws -> (MockValidator, MockConnectionState) {
        var configuration = keys.configuration
        configuration.faults = try FaultPlan(parsing: faults)
        var validator = try MockValidator(configuration: configuration, clock: .fixed(epochSeconds: Support.now))
        let connection = validator.openConnection()
        return (validator, connection)
    }

    @Test("a valid token is accepted, raises the stream limit once, and is verified only once per connection")
    func validToken() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let token = try keys.bearerA(issuedAt: Support.now - 60)
        let first = validator.handle(Self.request(token), connection: &connection)
        #expect(Support.outcome(first) == "200")
        #expect(first.actions == [.raiseStreamLimit(1000)])
        #expect(connection.teamID == keys.teamA)
        #expect(connection.currentKeyID == keys.keyA)
        for stream in 1...100 {
            let next = validator.handle(Self.request(token, streamID: Int32(2 * stream + 1)), connection: &connection)
            #expect(Support.outcome(next) == "200")
            #expect(next.actions == [])
        }
        #expect(validator.counters.signatureVerifications == 1)
        var other = validator.openConnection()
        _ = validator.handle(Self.request(token), connection: &other)
        #expect(validator.counters.signatureVerifications == 2)
    }

    @Test("no token and no certificate is MissingProviderToken; so is an empty bearer")
    func missing() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        for value in [nil, "", "bearer", "bearer  "] as [String?] {
            let decision = validator.handle(Self.request(value), connection: &connection)
            #expect(Support.outcome(decision) == "403 MissingProviderToken")
            #expect(Support.body(decision.response) == #"{"reason":"MissingProviderToken"}"#)
        }
        #expect(!connection.isAuthenticated)
        #expect(connection.streamLimit == 1)
    }

    @Test("malformed tokens and other algorithms are InvalidProviderToken")
    func malformed() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let good = try keys.bearerA(issuedAt: Support.now)
        let jwt = String(good.dropFirst("bearer ".count))
        let parts = jwt.split(separator: ".").map(String.init)
        let noneHeader = Base64URL.encode(Array(#"{"alg":"none","kid":"KEYAAAAAA1"}"#.utf8))
        let rsHeader = Base64URL.encode(Array(#"{"alg":"RS256","kid":"KEYAAAAAA1"}"#.utf8))
        let cases = [
            "basic \(jwt)",
            "bearer\(jwt)",
            "bearer \(parts[0]).\(parts[1])",
            "bearer \(noneHeader).\(parts[1]).\(parts[2])",
            "bearer \(rsHeader).\(parts[1]).\(parts[2])",
            "bearer \(parts[0]).\(parts[1]).\(Base64URL.encode([UInt8](repeating: 1, count: 70)))",
            "bearer \(jwt)x",
        ]
        for value in cases {
            #expect(
                Support.outcome(validator.handle(Self.request(value), connection: &connection))
                    == "403 InvalidProviderToken", "\(value)")
        }
        #expect(Support.outcome(validator.handle(Self.request(good), connection: &connection)) == "200")
        #expect(Support.outcome(validator.handle(Self.request("Bearer   \(jwt)  "), connection: &connection)) == "200")
    }

    @Test("an unknown kid is InvalidProviderToken")
    func unknownKeyID() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let token = try keys.bearer(keys.privateA, keyID: "KEYUNKNOWN", teamID: keys.teamA, issuedAt: Support.now)
        #expect(
            Support.outcome(validator.handle(Self.request(token), connection: &connection))
                == "403 InvalidProviderToken")
    }

    @Test("a token signed by another key than its kid names is InvalidProviderToken")
    func badSignature() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let forged = try keys.bearer(keys.stray, keyID: keys.keyA, teamID: keys.teamA, issuedAt: Support.now)
        #expect(
            Support.outcome(validator.handle(Self.request(forged), connection: &connection))
                == "403 InvalidProviderToken")
        let swapped = try keys.bearer(keys.privateB, keyID: keys.keyA, teamID: keys.teamA, issuedAt: Support.now)
        #expect(
            Support.outcome(validator.handle(Self.request(swapped), connection: &connection))
                == "403 InvalidProviderToken")
        #expect(!connection.isAuthenticated)
    }

    @Test("a key used with another team's id is UnrelatedKeyIdInToken")
    func unrelatedKeyID() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let token = try keys.bearer(keys.privateA, keyID: keys.keyA, teamID: keys.teamB, issuedAt: Support.now)
        let decision = validator.handle(Self.request(token), connection: &connection)
        #expect(Support.outcome(decision) == "403 UnrelatedKeyIdInToken")
        #expect(Support.body(decision.response) == #"{"reason":"UnrelatedKeyIdInToken"}"#)
    }

    @Test("iat more than an hour old is ExpiredProviderToken, also for a token the connection already knows")
    func expired() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let old = try keys.bearerA(issuedAt: Support.now - 3601)
        #expect(
            Support.outcome(validator.handle(Self.request(old), connection: &connection)) == "403 ExpiredProviderToken")
        let edge = try keys.bearerA(issuedAt: Support.now - 3600)
        #expect(Support.outcome(validator.handle(Self.request(edge), connection: &connection)) == "200")
        validator.clock = validator.clock.advanced(by: 1)
        #expect(
            Support.outcome(validator.handle(Self.request(edge), connection: &connection)) == "403 ExpiredProviderToken"
        )
    }

    @Test("an iat written as a string of digits is accepted with the usual age rules, refused under strictIssuedAt")
    func stringIssuedAt() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let quoted = try keys.bearerA(claims: #"{"iss":"\#(keys.teamA)","iat":"\#(Support.now - 60)"}"#)
        #expect(
            Support.outcome(validator.handle(Self.request(quoted), connection: &connection)) == "200",
            "string iat by default")
        #expect(connection.currentTokenIssuedAt == Support.now - 60)
        var fresh = validator.openConnection()
        let old = try keys.bearerA(claims: #"{"iss":"\#(keys.teamA)","iat":"\#(Support.now - 3601)"}"#)
        #expect(Support.outcome(validator.handle(Self.request(old), connection: &fresh)) == "403 ExpiredProviderToken")
        let ahead = try keys.bearerA(claims: #"{"iss":"\#(keys.teamA)","iat":"\#(Support.now + 61)"}"#)
        #expect(
            Support.outcome(validator.handle(Self.request(ahead), connection: &fresh)) == "403 InvalidProviderToken")
        for bad in ["", " 1750000000", "+1750000000", "-5", "1.75e9", "0x1a", "1750000000 ", "9999999999999999999"] {
            let token = try keys.bearerA(claims: #"{"iss":"\#(keys.teamA)","iat":"\#(bad)"}"#)
            #expect(
                Support.outcome(validator.handle(Self.request(token), connection: &fresh))
                    == "403 InvalidProviderToken", "iat [\(bad)]")
        }

        var strict = keys.configuration
        strict.strictIssuedAt = true
        var strictValidator = try MockValidator(configuration: strict, clock: .fixed(epochSeconds: Support.now))
        var strictConnection = strictValidator.openConnection()
        #expect(
            Support.outcome(strictValidator.handle(Self.request(quoted), connection: &strictConnection))
                == "403 InvalidProviderToken")
        let numeric = try keys.bearerA(claims: #"{"iss":"\#(keys.teamA)","iat":\#(Support.now - 60)}"#)
        #expect(Support.outcome(strictValidator.handle(Self.request(numeric), connection: &strictConnection)) == "200")
    }

    @Test("iat in the future beyond the allowed skew is InvalidProviderToken")
    func future() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let ahead = try keys.bearerA(issuedAt: Support.now + 61)
        #expect(
            Support.outcome(validator.handle(Self.request(ahead), connection: &connection))
                == "403 InvalidProviderToken")
        let slightlyAhead = try keys.bearerA(issuedAt: Support.now + 60)
        #expect(Support.outcome(validator.handle(Self.request(slightlyAhead), connection: &connection)) == "200")
    }

    @Test("one team per connection: another team's valid token is InvalidProviderToken there, fine elsewhere")
    func oneTeamPerConnection() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        #expect(
            Support.outcome(
                validator.handle(Self.request(try keys.bearerA(issuedAt: Support.now)), connection: &connection))
                == "200")
        let teamB = try keys.bearerB(issuedAt: Support.now)
        #expect(
            Support.outcome(validator.handle(Self.request(teamB, streamID: 3), connection: &connection))
                == "403 InvalidProviderToken")
        #expect(connection.teamID == keys.teamA)
        var fresh = validator.openConnection()
        #expect(Support.outcome(validator.handle(Self.request(teamB), connection: &fresh)) == "200")
        #expect(fresh.teamID == keys.teamB)
    }

    @Test("a token change less than 20 minutes after the previous token is TooManyProviderTokenUpdates")
    func tooManyUpdates() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let t0 = Support.now
        let first = try keys.bearerA(issuedAt: t0)
        #expect(Support.outcome(validator.handle(Self.request(first), connection: &connection)) == "200")

        validator.clock = .fixed(epochSeconds: t0 + 300)
        let early = try keys.bearerA(issuedAt: t0 + 300)
        let rejected = validator.handle(Self.request(early, streamID: 3), connection: &connection)
        #expect(Support.outcome(rejected) == "429 TooManyProviderTokenUpdates")
        #expect(Support.body(rejected.response) == #"{"reason":"TooManyProviderTokenUpdates"}"#)
        #expect(Support.outcome(validator.handle(Self.request(first, streamID: 5), connection: &connection)) == "200")
        #expect(connection.currentTokenIssuedAt == t0)

        validator.clock = .fixed(epochSeconds: t0 + 1200)
        let onTime = try keys.bearerA(issuedAt: t0 + 1200)
        #expect(Support.outcome(validator.handle(Self.request(onTime, streamID: 7), connection: &connection)) == "200")
        #expect(connection.tokenChangeCount == 1)
        // The replaced token is still honoured for requests rendered before the change.
        #expect(Support.outcome(validator.handle(Self.request(first, streamID: 9), connection: &connection)) == "200")

        validator.clock = .fixed(epochSeconds: t0 + 1500)
        let again = try keys.bearerA(issuedAt: t0 + 1500)
        #expect(
            Support.outcome(validator.handle(Self.request(again, streamID: 11), connection: &connection))
                == "429 TooManyProviderTokenUpdates")
    }

    @Test("a connection opened late with a shared, older token may refresh it when it is 20 minutes old")
    func sharedTokenRefresh() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys)
        let shared = try keys.bearerA(issuedAt: Support.now - 45 * 60)
        #expect(Support.outcome(validator.handle(Self.request(shared), connection: &connection)) == "200")
        validator.clock = validator.clock.advanced(by: 5 * 60)
        let refreshed = try keys.bearerA(issuedAt: Support.now + 5 * 60)
        #expect(
            Support.outcome(validator.handle(Self.request(refreshed, streamID: 3), connection: &connection)) == "200")
    }

    @Test("an injected ExpiredProviderToken lets the connection change its token at once")
    func injectedExpiry() throws {
        let keys = try Keys()
        var (validator, connection) = try setup(keys, faults: ["expired-token=every:2"])
        let first = try keys.bearerA(issuedAt: Support.now)
        #expect(Support.outcome(validator.handle(Self.request(first), connection: &connection)) == "200")
        let faulted = validator.handle(Self.request(first, streamID: 3), connection: &connection)
        #expect(Support.outcome(faulted) == "403 ExpiredProviderToken")
        #expect(Support.body(faulted.response) == #"{"reason":"ExpiredProviderToken"}"#)
        validator.clock = validator.clock.advanced(by: 30)
        let resigned = try keys.bearerA(issuedAt: Support.now + 30)
        #expect(
            Support.outcome(validator.handle(Self.request(resigned, streamID: 5), connection: &connection)) == "200")
        #expect(connection.tokenChangeCount == 1)
        validator.clock = validator.clock.advanced(by: 30)
        let tooSoon = try keys.bearerA(issuedAt: Support.now + 60)
        #expect(
            Support.outcome(validator.handle(Self.request(tooSoon, streamID: 7), connection: &connection))
                == "429 TooManyProviderTokenUpdates")
    }

    @Test("an injected ExpiredProviderToken on one connection lets every connection using that token change it at once")
    func injectedExpirySharedToken() throws {
        let keys = try Keys()
        var (validator, first) = try setup(keys, faults: ["expired-token=every:3"])
        var second = validator.openConnection()
        let shared = try keys.bearerA(issuedAt: Support.now)
        #expect(Support.outcome(validator.handle(Self.request(shared), connection: &first)) == "200")
        #expect(Support.outcome(validator.handle(Self.request(shared), connection: &second)) == "200")
        #expect(
            Support.outcome(validator.handle(Self.request(shared, streamID: 3), connection: &first))
                == "403 ExpiredProviderToken")
        validator.clock = validator.clock.advanced(by: 1)
        let resigned = try keys.bearerA(issuedAt: Support.now + 1)
        // The client shares one token: the other connection switches to the re-signed one too.
        #expect(Support.outcome(validator.handle(Self.request(resigned, streamID: 3), connection: &second)) == "200")
        #expect(Support.outcome(validator.handle(Self.request(resigned, streamID: 5), connection: &first)) == "200")
    }

    @Test("token auth needs a topic, and the team's allowed bundle ids apply")
    func topics() throws {
        let keys = try Keys()
        var configuration = keys.configuration
        configuration.allowedBundleIDsByTeam = [keys.teamA: ["com.example.app"]]
        var validator = try MockValidator(configuration: configuration, clock: .fixed(epochSeconds: Support.now))
        var connection = validator.openConnection()
        let token = try keys.bearerA(issuedAt: Support.now)
        #expect(
            Support.outcome(validator.handle(Self.request(token, topic: nil), connection: &connection))
                == "400 MissingTopic")
        #expect(
            Support.outcome(
                validator.handle(Self.request(token, streamID: 3, topic: "com.example.other"), connection: &connection))
                == "400 TopicDisallowed")
        #expect(Support.outcome(validator.handle(Self.request(token, streamID: 5), connection: &connection)) == "200")
    }

    @Test(
        "a topic-scoped key pushes to its own bundle ids only: TopicDisallowed elsewhere, also after a 200 on the connection"
    )
    func keyScopedTopics() throws {
        let keys = try Keys()
        var configuration = keys.configuration
        configuration.allowedBundleIDsByKey = [keys.keyA: ["com.example.app"], keys.keyB: ["com.example.two"]]
        var validator = try MockValidator(configuration: configuration, clock: .fixed(epochSeconds: Support.now))
        var connection = validator.openConnection()
        let tokenA = try keys.bearerA(issuedAt: Support.now)
        #expect(
            Support.outcome(validator.handle(Self.request(tokenA, topic: "com.example.app"), connection: &connection))
                == "200")
        #expect(
            Support.outcome(
                validator.handle(
                    Self.request(tokenA, streamID: 3, topic: "com.example.app.voip"), connection: &connection))
                != "400 TopicDisallowed")
        #expect(
            Support.outcome(
                validator.handle(Self.request(tokenA, streamID: 5, topic: "com.example.two"), connection: &connection))
                == "400 TopicDisallowed")
        var other = validator.openConnection()
        let tokenB = try keys.bearerB(issuedAt: Support.now)
        #expect(
            Support.outcome(validator.handle(Self.request(tokenB, topic: "com.example.two"), connection: &other))
                == "200")
        #expect(
            Support.outcome(
                validator.handle(Self.request(tokenB, streamID: 3, topic: "com.example.app"), connection: &other))
                == "400 TopicDisallowed")
        // Another team's token on the first connection: one team per connection.
        #expect(
            Support.outcome(
                validator.handle(Self.request(tokenB, streamID: 7, topic: "com.example.two"), connection: &connection))
                == "403 InvalidProviderToken")
    }

    @Test("configured keys must have 10-character ids and distinct key ids")
    func keyConfiguration() throws {
        let keys = try Keys()
        let short = MockConfiguration(keys: [
            MockProviderKey(keyID: "SHORT", teamID: keys.teamA, publicKey: keys.privateA.publicKey)
        ])
        #expect(throws: MockConfigurationError.self) { try MockValidator(configuration: short) }
        let twice = MockConfiguration(keys: [
            MockProviderKey(keyID: keys.keyA, teamID: keys.teamA, publicKey: keys.privateA.publicKey),
            MockProviderKey(keyID: keys.keyA, teamID: keys.teamB, publicKey: keys.privateB.publicKey),
        ])
        #expect(throws: MockConfigurationError.self) { try MockValidator(configuration: twice) }
    }

    @Test("the sample key's public half verifies tokens signed with the sample .p8 (what sample campaigns rely on)")
    func sampleKey() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let keys = root.appendingPathComponent("samples/keys")
        let privateKey = try ProviderKey(contentsOfFile: keys.appendingPathComponent("AuthKey_TEST123456.p8").path)
        let publicKey = try ProviderPublicKey(
            contentsOfFile: keys.appendingPathComponent("AuthKey_TEST123456.pub.pem").path)
        let configuration = MockConfiguration(keys: [
            MockProviderKey(keyID: "TEST123456", teamID: "TEAMID1234", publicKey: publicKey)
        ])
        var validator = try MockValidator(configuration: configuration, clock: .fixed(epochSeconds: Support.now))
        var connection = validator.openConnection()
        let token =
            try "bearer "
            + ProviderTokenSigner(key: privateKey, keyID: "TEST123456", teamID: "TEAMID1234").sign(
                issuedAt: Support.now)
        #expect(Support.outcome(validator.handle(Self.request(token), connection: &connection)) == "200")
        let stranger = try Keys()
        let forged = try stranger.bearer(
            stranger.privateA, keyID: "TEST123456", teamID: "TEAMID1234", issuedAt: Support.now)
        var other = validator.openConnection()
        #expect(
            Support.outcome(validator.handle(Self.request(forged), connection: &other)) == "403 InvalidProviderToken")
    }
}
