import APNSCore
import ArgumentParser
import Testing

@testable import APNSBulkCLI

/// `--topic-key BUNDLE-ID=FILE,key-id=ID,team-id=ID`: what it reads, what it refuses and why, and how the keys of a
/// run are numbered and shared.
@Suite("--topic-key")
struct TopicKeyOptionTests {
    @Test("reads the bundle id, file and ids; team-id may come from --team-id")
    func parses() throws {
        let entry = try TopicKeyOption(
            parsing: "com.example.app=/keys/AuthKey_ABC1234567.p8,key-id=ABC1234567,team-id=TEAM123456", teamID: nil)
        #expect(
            entry
                == TopicKeyOption(
                    bundleID: "com.example.app", keyFile: "/keys/AuthKey_ABC1234567.p8", keyID: "ABC1234567",
                    teamID: "TEAM123456"))
        let teamFromOption = try TopicKeyOption(parsing: "com.b=k.p8,key-id=ABC1234567", teamID: "TEAMDEFAUL")
        #expect(teamFromOption.teamID == "TEAMDEFAUL")
        let ownTeamWins = try TopicKeyOption(
            parsing: "com.b=k.p8,team-id=TEAM123456,key-id=ABC1234567", teamID: "TEAMDEFAUL")
        #expect(ownTeamWins.teamID == "TEAM123456")
    }

    @Test(
        "each malformed value names what is wrong",
        arguments: [
            ("com.example.app", "expected BUNDLE-ID=FILE"),
            ("=k.p8,key-id=ABC1234567,team-id=TEAM123456", "the bundle id"),
            ("com.example.=k.p8,key-id=ABC1234567,team-id=TEAM123456", "ends in a dot"),
            ("com.a=,key-id=ABC1234567,team-id=TEAM123456", "no key file"),
            ("com.a=k.p8,team-id=TEAM123456", "no key-id"),
            ("com.a=k.p8,key-id=ABC1234567", "no team-id"),
            ("com.a=k.p8,key-id=ABC123,team-id=TEAM123456", "has 6 characters"),
            ("com.a=k.p8,key-id=ABC1234567,team-id=TEAM123456,key-id=ABC1234567", "key-id is given twice"),
            ("com.a=k.p8,key-id=ABC1234567,team=TEAM123456", "unknown 'team='"),
            ("com.a=my,keys.p8,key-id=ABC1234567,team-id=TEAM123456", "'keys.p8' is not key-id=ID"),
        ])
    func refuses(_ text: String, _ expected: String) {
        #expect(throws: TopicKeyOptionError.self) { try TopicKeyOption(parsing: text, teamID: nil) }
        do {
            _ = try TopicKeyOption(parsing: text, teamID: nil)
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }

    @Test("the default key is key 0; a key named for two bundle ids is one key; a bundle id given twice is refused")
    func keySet() throws {
        let a = try TopicKeyOption(parsing: "com.a=a.p8,key-id=AAAAAAAAA1,team-id=TEAMAAAAA1", teamID: nil)
        let b = try TopicKeyOption(parsing: "com.b=b.p8,key-id=BBBBBBBBB1,team-id=TEAMBBBBB1", teamID: nil)
        let c = try TopicKeyOption(parsing: "com.c=a.p8,key-id=AAAAAAAAA1,team-id=TEAMAAAAA1", teamID: nil)
        let set = try ProviderKeySet(
            defaultKey: .init(file: "d.p8", keyID: "DDDDDDDDD1", teamID: "TEAMDDDDD1"), entries: [a, b, c])
        #expect(set.keys.map(\.keyID) == ["DDDDDDDDD1", "AAAAAAAAA1", "BBBBBBBBB1"])
        #expect(set.routes.defaultKey == 0)
        #expect(set.routes.key(for: try Topic(validating: "com.a")) == 1)
        #expect(set.routes.key(for: try Topic(validating: "com.c.voip")) == 1)
        #expect(set.routes.key(for: try Topic(validating: "com.b")) == 2)
        #expect(set.routes.key(for: try Topic(validating: "com.z")) == 0)

        let noDefault = try ProviderKeySet(defaultKey: nil, entries: [a, b])
        #expect(noDefault.routes.defaultKey == nil)
        #expect(noDefault.routes.key(for: try Topic(validating: "com.a")) == 0)
        #expect(noDefault.routes.key(for: try Topic(validating: "com.z")) == nil)

        #expect(throws: TopicKeyOptionError.self) { try ProviderKeySet(defaultKey: nil, entries: [a, a]) }
        let otherFile = try TopicKeyOption(parsing: "com.d=other.p8,key-id=AAAAAAAAA1,team-id=TEAMAAAAA1", teamID: nil)
        #expect(throws: TopicKeyOptionError.self) { try ProviderKeySet(defaultKey: nil, entries: [a, otherFile]) }
    }

    @Test("send: --topic-key is refused beside a client certificate, and --key-id alone without --key")
    func commandLineRules() {
        let key = "com.a=a.p8,key-id=AAAAAAAAA1,team-id=TEAMAAAAA1"
        #expect(throws: (any Error).self) {
            try SendCommand.parse(["c.ndjson", "--results", "r.ndjson", "--topic-key", key, "--cert", "c.pem"])
        }
        #expect(throws: (any Error).self) {
            try SendCommand.parse(["c.ndjson", "--results", "r.ndjson", "--topic-key", key, "--key-id", "DDDDDDDDD1"])
        }
        #expect(throws: (any Error).self) {
            try SendCommand.parse(["c.ndjson", "--results", "r.ndjson", "--topic-key", "com.a=a.p8"])
        }
        #expect((try? SendCommand.parse(["c.ndjson", "--results", "r.ndjson", "--topic-key", key])) != nil)
    }
}
