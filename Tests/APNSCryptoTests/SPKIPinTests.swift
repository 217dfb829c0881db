import APNSCrypto
import Foundation
import Testing

/// SPKI pins against the openssl pipeline, chain files, pin text, pin sets.
@Suite("SPKI pins")
struct SPKIPinTests {
    /// The pipeline of seed 003 / APNS.md, run by the shell.
    static func opensslPin(_ path: String) throws -> String {
        let result = try CryptoTestSupport.shell(
            "openssl x509 -noout -pubkey -in \(CryptoTestSupport.quoted(path)) | openssl pkey -pubin -outform der"
                + " | openssl dgst -sha256 -binary | openssl enc -base64"
        )
        try #require(result.status == 0, "\(result.stderr)")
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "agrees with the openssl pipeline for an RSA and an EC certificate", arguments: ["rsa-cert.pem", "ec-cert.pem"])
    func agreesWithOpenSSL(name: String) throws {
        let path = CryptoTestSupport.fixture(name)
        let expected = try Self.opensslPin(path)
        #expect(expected.count == 44)
        let pins = try SPKIPin.pins(contentsOfFile: path)
        #expect(pins.map(\.base64) == [expected])

        let der = try CryptoTestSupport.run(["openssl", "x509", "-in", path, "-outform", "der"])
        try #require(der.status == 0)
        #expect(try SPKIPin.sha256Base64(certificateDER: Array(der.stdout)) == expected)
    }

    @Test("reads a whole chain file: one pin per certificate, in order, each as openssl computes it")
    func wholeChain() throws {
        let path = CryptoTestSupport.fixture("chain.pem")
        let text = try CryptoTestSupport.contents(of: path)
        let blocks = text.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().map { body in
            "-----BEGIN CERTIFICATE-----" + body.components(separatedBy: "-----END CERTIFICATE-----")[0]
                + "-----END CERTIFICATE-----\n"
        }
        try #require(blocks.count == 3)
        let directory = try CryptoTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var expected: [String] = []
        for (index, block) in blocks.enumerated() {
            let file = directory.appendingPathComponent("cert-\(index).pem")
            try block.write(to: file, atomically: true, encoding: .utf8)
            expected.append(try Self.opensslPin(file.path))
        }
        #expect(Set(expected).count == 3)
        #expect(try SPKIPin.pins(contentsOfFile: path).map(\.base64) == expected)
        let chain = try CertificateChain(contentsOfFile: path)
        #expect(
            chain.certificates.map(\.commonName) == ["leaf.fixture.test", "fixture intermediate CA", "fixture root CA"])
        #expect(chain.leaf.subject.contains("UID=com.example.fixture"))
    }

    @Test("pin text: 44 characters of base64 of 32 bytes, optionally with curl's sha256// prefix")
    func parsing() throws {
        let pin = try #require(try SPKIPin.pins(contentsOfFile: CryptoTestSupport.fixture("ec-cert.pem")).first)
        #expect(try SPKIPin(pin.base64) == pin)
        #expect(try SPKIPin("sha256//" + pin.base64) == pin)
        #expect(try SPKIPin("sha256/" + pin.base64) == pin)
        #expect(try SPKIPin("  " + pin.base64 + "\n") == pin)
        #expect(try SPKIPin(sha256Digest: pin.sha256) == pin)
        let invalid = [
            "", String(pin.base64.dropLast()), pin.base64 + "A", "sha1/" + pin.base64,
            Data(repeating: 1, count: 31).base64EncodedString() + "=",
            Data(repeating: 1, count: 33).base64EncodedString(),
            pin.base64.replacingOccurrences(of: "=", with: "A"), String(repeating: "!", count: 44),
        ]
        for text in invalid {
            #expect(throws: CryptoError.invalidPin, "\(text)") { try SPKIPin(text) }
        }
        #expect(throws: CryptoError.invalidPin) { try SPKIPin(sha256Digest: [1, 2, 3]) }
    }

    @Test("a pin set matches a chain when any certificate's key is pinned")
    func pinSetMatching() throws {
        let chain = try CertificateChain(contentsOfFile: CryptoTestSupport.fixture("chain.pem"))
        let other = try CertificateChain(contentsOfFile: CryptoTestSupport.fixture("rsa-cert.pem"))
        let intermediateOnly = PinSet([chain.certificates[1].spkiPin])
        #expect(intermediateOnly.matches(anyOf: chain.ders))
        #expect(intermediateOnly.matches(anyOf: chain.ders.reversed()))
        #expect(!intermediateOnly.matches(anyOf: other.ders))
        #expect(!intermediateOnly.matches(anyOf: [chain.ders[0], chain.ders[2]]))
        #expect(!intermediateOnly.matches(anyOf: [[0x30, 0x03, 0x02, 0x01, 0x00]]))
        #expect(!PinSet([]).matches(anyOf: chain.ders))
        let parsed = try PinSet(parsing: [other.leaf.spkiPin.base64, "sha256//" + chain.leaf.spkiPin.base64])
        #expect(parsed.matches(anyOf: [chain.ders[0]]) && parsed.matches(anyOf: other.ders))
        #expect(throws: CryptoError.invalidPin) { try PinSet(parsing: ["not a pin"]) }
    }

    @Test("certificate loading errors: no PEM, PEM without certificates, undecodable certificate")
    func certificateErrors() throws {
        #expect(throws: CryptoError.notPEM) { try CertificateChain(pem: "hello") }
        #expect(throws: CryptoError.noCertificates) {
            try CertificateChain(contentsOfFile: CryptoTestSupport.sample("AuthKey_TEST123456.p8"))
        }
        let broken =
            "-----BEGIN CERTIFICATE-----\n" + Data(repeating: 7, count: 60).base64EncodedString()
            + "\n-----END CERTIFICATE-----\n"
        #expect(throws: CryptoError.malformedCertificate) { try CertificateChain(pem: broken) }
        #expect(throws: CryptoError.malformedCertificate) { try SPKIPin.sha256Base64(certificateDER: [1, 2, 3]) }
        #expect(throws: CryptoError.fileNotFound) { try SPKIPin.pins(contentsOfFile: "/nonexistent/chain.pem") }
        let der = try CertificateChain(contentsOfFile: CryptoTestSupport.fixture("ec-cert.pem")).leaf.der
        #expect(throws: CryptoError.malformedCertificate, "trailing bytes") { try X509Certificate(der: der + [0]) }
    }
}
