import APNSCrypto
import Foundation
import Testing

/// Loading .p8 keys: the sample, every wrong-file error, identifier validation.
@Suite("provider key loading")
struct ProviderKeyTests {
    @Test("the sample .p8 loads, and its derived public key is the sample public key")
    func sampleKeyLoads() throws {
        let key = try ProviderKey(contentsOfFile: CryptoTestSupport.sample("AuthKey_TEST123456.p8"))
        let expected = try CryptoTestSupport.contents(of: CryptoTestSupport.sample("AuthKey_TEST123456.pub.pem"))
        #expect(try key.publicKeyPEM() == expected)
        let again = try ProviderKey(pem: key.pkcs8PEM())
        #expect(try again.publicKeyPEM() == expected)
    }

    @Test("a SEC 1 'EC PRIVATE KEY' on P-256 is accepted too")
    func sec1KeyLoads() throws {
        let key = try ProviderKey(contentsOfFile: CryptoTestSupport.fixture("ec-sec1-key.pem"))
        let signer = try ProviderTokenSigner(key: key, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        #expect(try ProviderTokenVerifier.verify(signer.sign(issuedAt: 1), with: key.publicKey).signatureIsValid)
    }

    @Test(
        "each wrong file gets its own error",
        arguments: [
            ("rsa-key.pem", CryptoError.keyNotEC, "RSA"),
            ("ed25519-key.pem", CryptoError.keyNotEC, "ED25519"),
            ("p384-key.p8", CryptoError.keyNotOnP256, "secp384r1"),
            ("garbage.p8", CryptoError.notPEM, "BEGIN"),
            ("random.p8", CryptoError.notPEM, "BEGIN"),
            ("ec-cert.pem", CryptoError.notAPrivateKey, "CERTIFICATE"),
            ("chain.pem", CryptoError.notAPrivateKey, "CERTIFICATE"),
            ("encrypted-key.p8", CryptoError.encryptedKey, "password"),
        ])
    func wrongFiles(name: String, expected: CryptoError, detail: String) throws {
        let path = CryptoTestSupport.fixture(name)
        do {
            _ = try ProviderKey(contentsOfFile: path)
            Issue.record("\(name) loaded as a provider key")
        } catch {
            #expect(error == expected, "\(name): \(error)")
            #expect(error.description.hasPrefix(expected.summary + ": " + path), "\(error)")
            #expect(error.description.contains(detail), "\(error)")
        }
    }

    @Test("a public key is not a private key, and a private key is not a public key")
    func publicAndPrivateAreTold() throws {
        #expect(throws: CryptoError.notAPrivateKey) {
            try ProviderKey(contentsOfFile: CryptoTestSupport.sample("AuthKey_TEST123456.pub.pem"))
        }
        #expect(throws: CryptoError.notAPublicKey) {
            try ProviderPublicKey(contentsOfFile: CryptoTestSupport.sample("AuthKey_TEST123456.p8"))
        }
        let rsaPublic = try CryptoTestSupport.run([
            "openssl", "pkey", "-in", CryptoTestSupport.fixture("rsa-key.pem"), "-pubout",
        ])
        #expect(throws: CryptoError.keyNotEC) { try ProviderPublicKey(pem: rsaPublic.text) }
    }

    @Test("missing and unreadable files name the path")
    func missingFiles() throws {
        let missing = "/nonexistent/AuthKey_NOPE123456.p8"
        #expect(throws: CryptoError.fileNotFound) { try ProviderKey(contentsOfFile: missing) }
        do {
            _ = try ProviderKey(contentsOfFile: missing)
        } catch {
            #expect(error.description == "file not found: \(missing)")
        }
        let directory = try CryptoTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: CryptoError.fileUnreadable) { try ProviderKey(contentsOfFile: directory.path) }
    }

    @Test("broken PEM framing and undecodable key bodies are told apart from 'not PEM'")
    func brokenPEM() throws {
        let good = try CryptoTestSupport.contents(of: CryptoTestSupport.sample("AuthKey_TEST123456.p8"))
        let truncated = String(good.prefix(good.count - 30))
        #expect(throws: CryptoError.malformedPEM) { try ProviderKey(pem: truncated) }
        let nonsense =
            "-----BEGIN PRIVATE KEY-----\n" + Data(repeating: 0x42, count: 48).base64EncodedString()
            + "\n-----END PRIVATE KEY-----\n"
        #expect(throws: CryptoError.malformedKey) { try ProviderKey(pem: nonsense) }
        #expect(throws: CryptoError.notPEM) { try ProviderKey(pem: "") }
    }

    @Test("key ids and team ids: exactly 10 ASCII letters or digits")
    func identifierValidation() throws {
        for valid in ["TEST123456", "ABC123DEFG", "abcdefghij", "0123456789"] {
            #expect(ProviderIdentifier.isValid(valid))
            #expect(try ProviderIdentifier.validateKeyID(valid) == valid)
            #expect(try ProviderIdentifier.validateTeamID(valid) == valid)
        }
        for invalid in [
            "", "TEST12345", "TEST1234567", "TEST-12345", "TEST 12345", "TÉST123456", "TEST12345\n", "ＴEST123456",
        ] {
            #expect(!ProviderIdentifier.isValid(invalid), "\(invalid)")
            #expect(throws: CryptoError.invalidKeyID) { try ProviderIdentifier.validateKeyID(invalid) }
            #expect(throws: CryptoError.invalidTeamID) { try ProviderIdentifier.validateTeamID(invalid) }
        }
        do {
            try ProviderIdentifier.validateKeyID("TEST-12345")
        } catch {
            #expect(error.description.contains("key id") && error.description.contains("TEST-12345"))
        }
    }
}
