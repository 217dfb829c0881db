import APNSCrypto
import Foundation
import Testing

/// The test CA, checked with openssl verify.
@Suite("test certificate authority")
struct TestCertificateAuthorityTests {
    @Test("a leaf issued for localhost and 127.0.0.1 passes openssl verify -CAfile; a foreign CA's leaf does not")
    func opensslVerifiesLeaf() throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issueLeaf(
            commonName: "localhost", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"])
        let stranger = try TestCertificateAuthority(commonName: "someone else")
        let directory = try CryptoTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let caFile = directory.appendingPathComponent("ca.pem")
        let leafFile = directory.appendingPathComponent("leaf.pem")
        let strangerCAFile = directory.appendingPathComponent("stranger-ca.pem")
        try authority.certificatePEM.write(to: caFile, atomically: true, encoding: .utf8)
        try leaf.certificatePEM.write(to: leafFile, atomically: true, encoding: .utf8)
        try stranger.certificatePEM.write(to: strangerCAFile, atomically: true, encoding: .utf8)

        let verified = try CryptoTestSupport.run([
            "openssl", "verify", "-CAfile", caFile.path, "-purpose", "sslserver", "-verify_hostname", "localhost",
            "-verify_ip", "127.0.0.1", leafFile.path,
        ])
        #expect(verified.status == 0, "\(verified.text) \(verified.stderr)")
        #expect(verified.text.contains("\(leafFile.path): OK"))

        let foreign = try CryptoTestSupport.run(["openssl", "verify", "-CAfile", strangerCAFile.path, leafFile.path])
        #expect(foreign.status != 0)

        let names = try CryptoTestSupport.run([
            "openssl", "x509", "-noout", "-ext", "subjectAltName,basicConstraints", "-in", leafFile.path,
        ])
        #expect(names.text.contains("DNS:localhost"))
        #expect(names.text.contains("IP Address:127.0.0.1"))
        #expect(names.text.contains("CA:FALSE"))
        let caConstraints = try CryptoTestSupport.run([
            "openssl", "x509", "-noout", "-ext", "basicConstraints", "-in", caFile.path,
        ])
        #expect(caConstraints.text.contains("CA:TRUE"))
    }

    @Test("issued material is consistent: the chain PEM, the key, the CA reloaded from PEM")
    func issuedMaterial() throws {
        let authority = try TestCertificateAuthority(commonName: "apns-bulk mock CA")
        let leaf = try authority.issueLeaf(
            commonName: "api.sandbox.push.apple.com", dnsNames: ["api.sandbox.push.apple.com"])
        #expect(leaf.certificate.commonName == "api.sandbox.push.apple.com")
        #expect(leaf.privateKey.algorithm == "EC P-256")
        #expect(leaf.privateKey.matches(leaf.certificate))
        #expect(!authority.privateKey.matches(leaf.certificate))
        let chain = try CertificateChain(pem: leaf.chainPEM)
        #expect(chain.certificates == [leaf.certificate, authority.certificate])
        #expect(try PrivateKeyPEM(pem: leaf.privateKeyPEM).pkcs8DER == leaf.privateKey.pkcs8DER)

        let reloaded = try TestCertificateAuthority(
            certificatePEM: authority.certificatePEM, privateKeyPEM: authority.privateKey.pem())
        #expect(reloaded.certificate == authority.certificate)
        let second = try reloaded.issueLeaf(commonName: "second")
        let directory = try CryptoTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let caFile = directory.appendingPathComponent("ca.pem")
        let leafFile = directory.appendingPathComponent("second.pem")
        try authority.certificatePEM.write(to: caFile, atomically: true, encoding: .utf8)
        try second.certificatePEM.write(to: leafFile, atomically: true, encoding: .utf8)
        let verified = try CryptoTestSupport.run(["openssl", "verify", "-CAfile", caFile.path, leafFile.path])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(throws: CryptoError.keyDoesNotMatchCertificate) {
            try TestCertificateAuthority(certificatePEM: authority.certificatePEM, privateKeyPEM: leaf.privateKeyPEM)
        }
    }

    @Test("client certificates carry the topic as subject UID and Apple's markers, and verify for sslclient")
    func clientCertificate() throws {
        let authority = try TestCertificateAuthority()
        let client = try authority.issueLeaf(
            commonName: "Apple Push Services: com.example.app",
            userID: "com.example.app",
            usage: .client,
            extraExtensions: [.appleDevelopment, .appleTopics(["com.example.app", "com.example.app.voip"])]
        )
        #expect(client.certificate.subject.contains("UID=com.example.app"))
        let directory = try CryptoTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let caFile = directory.appendingPathComponent("ca.pem")
        let clientFile = directory.appendingPathComponent("client.pem")
        try authority.certificatePEM.write(to: caFile, atomically: true, encoding: .utf8)
        try client.certificatePEM.write(to: clientFile, atomically: true, encoding: .utf8)
        let verified = try CryptoTestSupport.run([
            "openssl", "verify", "-CAfile", caFile.path, "-purpose", "sslclient", clientFile.path,
        ])
        #expect(verified.status == 0, "\(verified.stderr)")
        let asServer = try CryptoTestSupport.run([
            "openssl", "verify", "-CAfile", caFile.path, "-purpose", "sslserver", clientFile.path,
        ])
        #expect(asServer.status != 0, "a client-only certificate must not pass as a server certificate")
        let text = try CryptoTestSupport.run(["openssl", "x509", "-noout", "-text", "-in", clientFile.path])
        #expect(text.text.contains("1.2.840.113635.100.6.3.1"))
        #expect(text.text.contains("1.2.840.113635.100.6.3.6"))
        #expect(text.text.contains("com.example.app.voip"))
    }

    @Test(
        "unusable names and addresses are refused",
        arguments: [
            (["bad,name"], [String]()), (["a b"], []), ([""], []), ([], ["999.1.1.1"]), ([], ["127.0.0.1,DNS:evil"]),
            ([], ["localhost"]),
        ])
    func invalidRequests(dnsNames: [String], ipAddresses: [String]) throws {
        let authority = try TestCertificateAuthority()
        #expect(throws: CryptoError.invalidCertificateRequest) {
            try authority.issueLeaf(commonName: "x", dnsNames: dnsNames, ipAddresses: ipAddresses)
        }
    }
}
