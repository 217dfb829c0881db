import APNSCore
import Testing

@testable import APNSMock

@Suite("Token registry")
struct TokenRegistryTests {
    private let a = String(repeating: "a1", count: 32)
    private let b = String(repeating: "b2", count: 32)
    private let c = String(repeating: "c3", count: 32)
    private let d = String(repeating: "d4", count: 32)
    private let e = String(repeating: "e5", count: 16)

    private func token(_ hex: String) throws -> DeviceToken { try DeviceToken(parsing: hex) }

    @Test("a registry file is parsed line by line, with comments, blank lines and optional values")
    func parsesFile() throws {
        let text = """
            # dead tokens for the sample campaign
            unregistered \(a) 1690000000000
            unregistered \(b.uppercased())   # no timestamp: derived

            expired\t\(c) 1600000000000
            wrong-topic \(d) com.example.other
            bad \(e)
            """
        let registry = try TokenRegistry(parsing: text)
        #expect(registry.count == 5)
        #expect(registry.entry(for: try token(a)) == .unregistered(timestampMilliseconds: 1_690_000_000_000))
        let derived = TokenRegistry.derivedTimestamp(for: try token(b))
        #expect(registry.entry(for: try token(b)) == .unregistered(timestampMilliseconds: derived))
        #expect(registry.entry(for: try token(c)) == .expired(timestampMilliseconds: 1_600_000_000_000))
        #expect(registry.entry(for: try token(d)) == .wrongTopic(validTopic: "com.example.other"))
        #expect(registry.entry(for: try token(e)) == .bad)
    }

    @Test("each entry kind answers its reason, with the timestamp for 410s")
    func rejections() throws {
        let registry = try TokenRegistry(
            parsing: """
                unregistered \(a) 1690000000000
                expired \(c) 1600000000000
                wrong-topic \(d) com.example.other
                bad \(e)
                """)
        #expect(
            registry.rejection(for: try token(a), topic: "t")
                == .init(reason: .unregistered, timestampMilliseconds: 1_690_000_000_000))
        #expect(
            registry.rejection(for: try token(c), topic: "t")
                == .init(reason: .expiredToken, timestampMilliseconds: 1_600_000_000_000))
        #expect(
            registry.rejection(for: try token(d), topic: "com.example.app")
                == .init(reason: .deviceTokenNotForTopic, timestampMilliseconds: nil))
        #expect(registry.rejection(for: try token(d), topic: "com.example.other") == nil)
        #expect(
            registry.rejection(for: try token(e), topic: "t")
                == .init(reason: .badDeviceToken, timestampMilliseconds: nil))
        #expect(registry.rejection(for: try token(b), topic: "t") == nil)
    }

    @Test(
        "bad lines are rejected with their line number",
        arguments: [
            ("unregistered", "line 1: 'unregistered' needs a device token"),
            ("# ok\nunregistered zz11", "line 2: device token has a non-hex character"),
            ("gone \(String(repeating: "a1", count: 32))", "line 1: unknown kind 'gone'"),
            ("unregistered \(String(repeating: "a1", count: 32)) soon", "line 1: timestamp 'soon'"),
            ("bad \(String(repeating: "a1", count: 32)) extra", "line 1: 'bad' takes no value"),
            ("wrong-topic \(String(repeating: "a1", count: 32)) t1 t2", "line 1: too many fields"),
            (
                "bad \(String(repeating: "a1", count: 32))\nbad \(String(repeating: "A1", count: 32))",
                "line 2: token a1a1"
            ),
            ("bad abc", "line 1: device token has 3 hex digits"),
        ])
    func rejectsBadLines(text: String, message: String) {
        #expect {
            try TokenRegistry(parsing: text)
        } throws: { error in
            guard let error = error as? MockConfigurationError else { return false }
            return error.isRegistryError && error.description.contains("token registry \(message)")
        }
    }

    @Test(
        "suffix rules: dead is Unregistered with a stable derived timestamp, 0bad is BadDeviceToken, f0f0 is DeviceTokenNotForTopic"
    )
    func suffixRules() throws {
        let registry = TokenRegistry()
        let dead = try token(MockTestSupport.token(endingIn: "dead"))
        let rejection = try #require(registry.rejection(for: dead, topic: "t"))
        #expect(rejection.reason == .unregistered)
        let timestamp = try #require(rejection.timestampMilliseconds)
        #expect(timestamp == TokenRegistry.derivedTimestamp(for: dead))
        #expect(timestamp >= TokenRegistry.derivedTimestampBase)
        #expect(timestamp < TokenRegistry.derivedTimestampBase + TokenRegistry.derivedTimestampSpan)
        let otherDead = try token(String(repeating: "2", count: 60) + "DEAD")
        #expect(TokenRegistry.derivedTimestamp(for: otherDead) != timestamp)

        let bad = try token(MockTestSupport.token(endingIn: "0bad"))
        #expect(registry.rejection(for: bad, topic: "t")?.reason == .badDeviceToken)
        let foreign = try token(MockTestSupport.token(endingIn: "f0f0"))
        #expect(registry.rejection(for: foreign, topic: "t")?.reason == .deviceTokenNotForTopic)
        let fine = try token(MockTestSupport.token(endingIn: "beef"))
        #expect(registry.rejection(for: fine, topic: "t") == nil)
    }

    @Test("a token given as its path bytes (the mock's way, nothing made) gets the answer the token gets")
    func storedFormAgrees() throws {
        let withEntries = try TokenRegistry(
            parsing: """
                unregistered \(a) 1690000000000
                expired \(c)
                wrong-topic \(d) com.example.other
                bad \(e)
                bad \(MockTestSupport.token(endingIn: "beef"))
                """)
        let registries = [withEntries, TokenRegistry(), TokenRegistry(usesSuffixRules: false)]
        let tokens = [a, b, c, d, e] + ["dead", "0bad", "f0f0", "beef"].map(MockTestSupport.token(endingIn:))
        var answered = 0
        for registry in registries {
            for hex in tokens {
                for topic in ["com.example.other", "t"] {
                    // Sliced out of a longer array, as a request's path is.
                    let path = Array("/3/device/\(hex)".utf8)
                    let viaBytes = registry.rejection(forStoredForm: path[10...], topicBytes: Array(topic.utf8))
                    #expect(
                        viaBytes == registry.rejection(for: try token(hex), topicBytes: Array(topic.utf8)),
                        "\(hex) \(topic)")
                    if viaBytes != nil { answered += 1 }
                }
            }
        }
        // With entries: a, c, e, beef, dead, 0bad, f0f0 on both topics and d on "t" only (15); suffix rules alone:
        // dead, 0bad, f0f0 on both (6); rules off: none.
        #expect(answered == 21)
    }

    @Test("suffix rules can be switched off, and a file entry wins over a rule")
    func rulesOffAndPrecedence() throws {
        let dead = try token(MockTestSupport.token(endingIn: "dead"))
        let off = TokenRegistry(usesSuffixRules: false)
        #expect(off.rejection(for: dead, topic: "t") == nil)
        var registry = TokenRegistry()
        registry.mark(dead, as: .bad)
        #expect(registry.rejection(for: dead, topic: "t")?.reason == .badDeviceToken)
    }
}
