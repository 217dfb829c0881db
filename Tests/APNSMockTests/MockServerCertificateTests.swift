import APNSCrypto
import APNSTransport
import Foundation
import Testing

@testable import APNSMock

/// Certificate-based trust: the mock asks for a client certificate and authenticates by its topics.
@Suite("Mock server with client certificates")
struct MockServerCertificateTests {
    /// A server trusting client certificates from its own CA, and a client certificate from that CA.
    private func setup(
        development: Bool = false, userID: String? = MockServerFixture.topic, extensions: [CertificateExtension] = []
    ) throws -> (MockServerFixture, TLSIdentity) {
        let authority = try TestCertificateAuthority()
        let tls = MockServerTLS.generated(authority: authority, clientCertificateTrust: .pem(authority.certificatePEM))
        let fixture = try MockServerFixture(tls: tls) {
            $0.keys = []
            $0.allowedBundleIDs = []
            $0.developmentMode = development
        }
        let leaf = try authority.issueLeaf(
            commonName: "Apple Push Services: \(MockServerFixture.topic)", userID: userID, usage: .client,
            extraExtensions: extensions
        )
        return (fixture, .pem(certificateChain: leaf.chainPEM, privateKey: leaf.privateKeyPEM))
    }

    private func answer(_ fixture: MockServerFixture, _ identity: TLSIdentity, topic: String?) throws
        -> MockServerRawClient.Answer?
    {
        let client = try MockServerRawClient(
            port: fixture.server.port, caPEM: try #require(fixture.server.caPEM), identity: identity
        )
        let tag = try client.send(authorization: nil, topic: topic)
        client.spin { client.answers[tag] != nil || client.isClosed }
        return client.answers[tag]
    }

    @Test("the subject UID is the certificate's topic: 200 without a token, TopicDisallowed for another topic")
    func subjectTopic() throws {
        let (fixture, identity) = try setup()
        #expect(try answer(fixture, identity, topic: MockServerFixture.topic)?.status == 200)
        #expect(try answer(fixture, identity, topic: nil)?.status == 200)  // the certificate's only topic
        let other = try answer(fixture, identity, topic: "com.example.other")
        #expect(other?.status == 400)
        #expect(other?.body == #"{"reason":"TopicDisallowed"}"#)
        #expect(fixture.server.counters().streamLimitRaises == 3)
    }

    @Test("without a UID, Apple's common name names the topic")
    func commonNameTopic() throws {
        let (fixture, identity) = try setup(userID: nil)
        #expect(try answer(fixture, identity, topic: MockServerFixture.topic)?.status == 200)
    }

    @Test("a multi-topic development certificate: its extension topics, and only against development")
    func multiTopicEnvironment() throws {
        let extensions = [CertificateExtension.appleTopics(["com.example.two"]), .appleDevelopment]
        let (production, identity) = try setup(extensions: extensions)
        let refused = try answer(production, identity, topic: "com.example.two")
        #expect(refused?.status == 403)
        #expect(refused?.body == #"{"reason":"BadCertificateEnvironment"}"#)

        let (development, devIdentity) = try setup(development: true, extensions: extensions)
        #expect(try answer(development, devIdentity, topic: "com.example.two")?.status == 200)
        #expect(try answer(development, devIdentity, topic: MockServerFixture.topic)?.status == 200)
    }

    @Test("a client without a certificate still connects and needs a token")
    func noCertificate() throws {
        let (fixture, _) = try setup()
        let client = try MockServerRawClient(port: fixture.server.port, caPEM: try #require(fixture.server.caPEM))
        let tag = try client.send(authorization: nil)
        client.spin { client.answers[tag] != nil || client.isClosed }
        #expect(client.answers[tag]?.body == #"{"reason":"MissingProviderToken"}"#)
    }

    @Test("the topics extension's DER is read: top-level strings, kinds skipped, malformed input cut short")
    func topicsExtensionDER() throws {
        let value = CertificateExtension.appleTopics(["com.example.a", "com.example.b"], kinds: ["app", "voip"])
            .derValue
        #expect(MockClientCertificate.topics(inExtension: value) == ["com.example.a", "com.example.b"])
        #expect(MockClientCertificate.topics(inExtension: Array(value.dropLast(3))).isEmpty)  // outer length too long
        #expect(MockClientCertificate.topics(inExtension: [0x30, 0x84, 0xFF]).isEmpty)
        #expect(MockClientCertificate.topics(inExtension: []).isEmpty)
    }
}
