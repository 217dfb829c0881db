import APNSCore
import Testing

@testable import APNSMock

/// Topic, payload, certificate and registry rules, each with an accepted and a rejected case.
@Suite("Validator: topic, payload, certificate, registry")
struct MockValidatorTopicPayloadTests {
    typealias Support = MockTestSupport

    private func answer(
        topic: String?,
        pushType: String?,
        priority: String? = nil,
        body: [UInt8] = MockTestSupport.payload,
        path: String? = nil,
        certificate: MockClientCertificate? = MockTestSupport.certificate,
        configuration: MockConfiguration = MockConfiguration()
    ) throws -> MockDecision {
        var headers: [(String, String)] = []
        if let topic { headers.append(("apns-topic", topic)) }
        if let pushType { headers.append(("apns-push-type", pushType)) }
        if let priority { headers.append(("apns-priority", priority)) }
        var (validator, connection) = try Support.certificateSetup(configuration, certificate: certificate)
        return validator.handle(Support.request(path: path, headers: headers, body: body), connection: &connection)
    }

    private static let universal = MockClientCertificate(
        subjectUID: "com.example.app",
        extensionTopics: ["com.example.app", "com.example.app.voip", "com.example.app.complication"]
    )

    @Test(
        "topic rules over a certificate",
        arguments: [
            ("com.example.app", "alert", "200"),
            ("com.example.app.voip", "voip", "200"),
            ("com.example.app.complication", "complication", "200"),
            ("com.example.app.push-type.liveactivity", "liveactivity", "200"),
            ("com.example.other", "alert", "400 TopicDisallowed"),
            ("com.example.other.voip", "voip", "400 TopicDisallowed"),
            ("com.example.app", "voip", "400 InvalidPushType"),
            ("com.example.app.voip", "alert", "400 InvalidPushType"),
            ("com.example.app.voip", "pushtotalk", "400 InvalidPushType"),
            ("com.example app", "alert", "400 BadTopic"),
            (String(repeating: "a", count: 256), "alert", "400 BadTopic"),
        ])
    func topics(topic: String, pushType: String, expected: String) throws {
        #expect(Support.outcome(try answer(topic: topic, pushType: pushType)) == expected)
    }

    @Test("a missing topic uses a single-topic certificate's topic, else it is MissingTopic")
    func missingTopic() throws {
        #expect(Support.outcome(try answer(topic: nil, pushType: "alert")) == "200")
        #expect(Support.outcome(try answer(topic: "", pushType: "alert")) == "200")
        #expect(
            Support.outcome(try answer(topic: nil, pushType: "alert", certificate: Self.universal))
                == "400 MissingTopic")
        #expect(
            Support.outcome(try answer(topic: "com.example.app.voip", pushType: "voip", certificate: Self.universal))
                == "200")
    }

    @Test("without apns-push-type the push type follows the topic's suffix")
    func inferredPushType() throws {
        let voipSized =
            Array(#"{"aps":{},"x":""#.utf8) + Array(repeating: UInt8(ascii: "v"), count: 5000) + Array(#""}"#.utf8)
        #expect(Support.outcome(try answer(topic: "com.example.app.voip", pushType: nil, body: voipSized)) == "200")
        #expect(
            Support.outcome(try answer(topic: "com.example.app", pushType: nil, body: voipSized))
                == "413 PayloadTooLarge")
    }

    @Test("token auth: allowed bundle ids per configuration and per team")
    func allowedBundleIDs() throws {
        // Checked through the topic rule directly, with a token authority.
        let validator = try MockValidator(
            configuration: MockConfiguration(
                allowedBundleIDs: ["com.example.app"], allowedBundleIDsByTeam: ["TEAM000002": ["com.other.app"]]
            ))
        var connection = MockConnectionState(id: 1, initialStreamLimit: 1)
        func check(_ topic: String, _ type: String, team: String) -> String {
            let request = Support.request(headers: [("apns-topic", topic), ("apns-push-type", type)])
            let fields = RequestHeaderFields(scanning: request.fields)
            guard case .success(let shaped) = MockValidator.checkShape(request, fields, requestID: nil) else {
                return "shape"
            }
            connection = MockConnectionState(id: 1, initialStreamLimit: 1)
            switch validator.checkTopic(
                request, shaped, authority: .token(keyID: "KEY0000001", teamID: team), connection: &connection)
            {
            case .success: return "ok"
            case .failure(let rejection): return rejection.reason.rawValue
            }
        }
        #expect(check("com.example.app", "alert", team: "TEAM000001") == "ok")
        #expect(check("com.example.app.voip", "voip", team: "TEAM000001") == "ok")
        #expect(check("com.example.app.push-type.widgets", "widgets", team: "TEAM000001") == "ok")
        #expect(check("com.example.other", "alert", team: "TEAM000001") == "TopicDisallowed")
        #expect(check("com.example.app", "location", team: "TEAM000001") == "InvalidPushType")
        #expect(check("com.other.app", "alert", team: "TEAM000002") == "ok")
        #expect(check("com.example.app", "alert", team: "TEAM000002") == "TopicDisallowed")
        let open = try MockValidator(configuration: MockConfiguration())
        let request = Support.request(headers: [("apns-topic", "anything.at.all"), ("apns-push-type", "alert")])
        let fields = RequestHeaderFields(scanning: request.fields)
        guard case .success(let shaped) = MockValidator.checkShape(request, fields, requestID: nil) else {
            Issue.record("shape")
            return
        }
        #expect(
            (try? open.checkTopic(
                request, shaped, authority: .token(keyID: "KEY0000001", teamID: "T"), connection: &connection
            ).get()) != nil)
    }

    @Test(
        "payload rules",
        arguments: [
            (Array(#"{"aps":{"alert":"x"}}"#.utf8), "alert", nil as String?, "200"),
            ([], "alert", nil, "400 PayloadEmpty"),
            (Array("   ".utf8), "alert", nil, "400 PayloadEmpty"),
            (Array("[1]".utf8), "alert", nil, "400 PayloadEmpty"),
            (Array("{".utf8), "alert", nil, "400 PayloadEmpty"),
            (Array(#"{"aps":{"content-available":1}}"#.utf8), "background", "5", "200"),
            (Array(#"{"aps":{"content-available":1}}"#.utf8), "background", "10", "400 BadPriority"),
            (Array(#"{"aps":{"content-available":1}}"#.utf8), "background", nil, "400 BadPriority"),
            (Array(#"{"aps":{"content-available":1,"badge":2}}"#.utf8), "alert", "10", "200"),
        ])
    func payload(body: [UInt8], pushType: String, priority: String?, expected: String) throws {
        #expect(
            Support.outcome(try answer(topic: Support.topic, pushType: pushType, priority: priority, body: body))
                == expected)
    }

    @Test("payload size limits: 4096 bytes, 5120 for voip")
    func payloadLimits() throws {
        func payload(size: Int) -> [UInt8] {
            let frame = Array(#"{"aps":{},"x":""}"#.utf8)
            return Array(frame.dropLast(2)) + Array(repeating: UInt8(ascii: "p"), count: size - frame.count)
                + Array(frame.suffix(2))
        }
        #expect(payload(size: 4096).count == 4096)
        #expect(
            Support.outcome(try answer(topic: Support.topic, pushType: "alert", body: payload(size: 4096))) == "200")
        let tooLarge = try answer(topic: Support.topic, pushType: "alert", body: payload(size: 4097))
        #expect(Support.outcome(tooLarge) == "413 PayloadTooLarge")
        #expect(Support.body(tooLarge.response) == #"{"reason":"PayloadTooLarge"}"#)
        #expect(
            Support.outcome(try answer(topic: "com.example.app.voip", pushType: "voip", body: payload(size: 5120)))
                == "200")
        #expect(
            Support.outcome(try answer(topic: "com.example.app.voip", pushType: "voip", body: payload(size: 5121)))
                == "413 PayloadTooLarge")
    }

    @Test("certificate checks: none, no topic, wrong environment")
    func certificates() throws {
        #expect(
            Support.outcome(try answer(topic: Support.topic, pushType: "alert", certificate: nil))
                == "403 MissingProviderToken")
        let noTopic = MockClientCertificate(subjectUID: nil)
        #expect(
            Support.outcome(try answer(topic: Support.topic, pushType: "alert", certificate: noTopic))
                == "403 BadCertificate")
        let production = MockClientCertificate(subjectUID: Support.topic, hasProductionExtension: true)
        let development = MockClientCertificate(subjectUID: Support.topic, hasDevelopmentExtension: true)
        let devMode = MockConfiguration(developmentMode: true)
        #expect(Support.outcome(try answer(topic: Support.topic, pushType: "alert", certificate: production)) == "200")
        #expect(
            Support.outcome(
                try answer(topic: Support.topic, pushType: "alert", certificate: production, configuration: devMode))
                == "403 BadCertificateEnvironment")
        #expect(
            Support.outcome(
                try answer(topic: Support.topic, pushType: "alert", certificate: development, configuration: devMode))
                == "200")
        #expect(
            Support.outcome(try answer(topic: Support.topic, pushType: "alert", certificate: development))
                == "403 BadCertificateEnvironment")
        let body = Support.body(try answer(topic: Support.topic, pushType: "alert", certificate: nil).response)
        #expect(body == #"{"reason":"MissingProviderToken"}"#)
    }

    @Test("registry answers come last and carry the exact bodies")
    func registry() throws {
        let dead = "/3/device/\(Support.token(endingIn: "dead"))"
        let decision = try answer(topic: Support.topic, pushType: "alert", path: dead)
        #expect(Support.outcome(decision) == "410 Unregistered")
        let timestamp = TokenRegistry.derivedTimestamp(for: try DeviceToken(parsing: Support.token(endingIn: "dead")))
        #expect(Support.body(decision.response) == #"{"reason":"Unregistered","timestamp":\#(timestamp)}"#)
        // A token in upper case is the same token: the rules and the timestamp see it lowered.
        let shouted = try answer(
            topic: Support.topic, pushType: "alert", path: "/3/device/" + Support.token(endingIn: "dead").uppercased())
        #expect(Support.body(shouted.response) == #"{"reason":"Unregistered","timestamp":\#(timestamp)}"#)
        // Earlier checks win over the registry.
        #expect(Support.outcome(try answer(topic: "com.other", pushType: "alert", path: dead)) == "400 TopicDisallowed")
        #expect(
            Support.outcome(try answer(topic: Support.topic, pushType: "alert", body: [], path: dead))
                == "400 PayloadEmpty")
        let foreign = try answer(
            topic: Support.topic, pushType: "alert", path: "/3/device/\(Support.token(endingIn: "f0f0"))")
        #expect(Support.body(foreign.response) == #"{"reason":"DeviceTokenNotForTopic"}"#)
        let bad = try answer(
            topic: Support.topic, pushType: "alert", path: "/3/device/\(Support.token(endingIn: "0bad"))")
        #expect(Support.outcome(bad) == "400 BadDeviceToken")
        let off = MockConfiguration(registry: TokenRegistry(usesSuffixRules: false))
        #expect(
            Support.outcome(try answer(topic: Support.topic, pushType: "alert", path: dead, configuration: off))
                == "200")
        var expiredRegistry = TokenRegistry()
        expiredRegistry.mark(try DeviceToken(parsing: Support.goodToken), as: .expired(timestampMilliseconds: 1234))
        let expired = try answer(
            topic: Support.topic, pushType: "alert", configuration: MockConfiguration(registry: expiredRegistry))
        #expect(Support.outcome(expired) == "410 ExpiredToken")
        #expect(Support.body(expired.response) == #"{"reason":"ExpiredToken","timestamp":1234}"#)
    }

    @Test("apns-unique-id only in development mode and only on 200")
    func uniqueID() throws {
        let production = try answer(topic: Support.topic, pushType: "alert")
        #expect(production.response?.uniqueID == nil)
        let development = try answer(
            topic: Support.topic, pushType: "alert", configuration: MockConfiguration(developmentMode: true))
        let unique = try #require(development.response?.uniqueID)
        #expect(unique != development.response?.apnsID)
        let rejected = try answer(
            topic: "com.other", pushType: "alert", configuration: MockConfiguration(developmentMode: true))
        #expect(rejected.response?.uniqueID == nil)
    }
}
