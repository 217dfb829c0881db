import APNSCrypto
import Foundation
import Testing

/// PKCS#12 archives (modern and legacy) and TLS private keys, with their error cases.
@Suite("PKCS#12 and TLS private keys")
struct PKCS12BundleTests {
    @Test(
        "opens a .p12, modern or legacy (RC2-40), into certificate, key and chain",
        arguments: ["client.p12", "client-legacy.p12"])
    func opens(name: String) throws {
        let bundle = try PKCS12Bundle(contentsOfFile: CryptoTestSupport.fixture(name), password: "fixture")
        let chain = try CertificateChain(contentsOfFile: CryptoTestSupport.fixture("chain.pem"))
        #expect(bundle.certificate == chain.leaf)
        #expect(Set(bundle.chain) == Set(chain.certificates.dropFirst()))
        #expect(bundle.privateKey.matches(bundle.certificate))
        let key = try PrivateKeyPEM(contentsOfFile: CryptoTestSupport.fixture("leaf-key.pem"))
        #expect(bundle.privateKey.pkcs8DER == key.pkcs8DER)
    }

    @Test("wrong password, missing key, and non-PKCS#12 bytes are told apart")
    func errors() throws {
        #expect(throws: CryptoError.wrongPassword) {
            try PKCS12Bundle(contentsOfFile: CryptoTestSupport.fixture("client.p12"), password: "guess")
        }
        #expect(throws: CryptoError.wrongPassword) {
            try PKCS12Bundle(contentsOfFile: CryptoTestSupport.fixture("client-legacy.p12"), password: "")
        }
        #expect(throws: CryptoError.incompletePKCS12) {
            try PKCS12Bundle(contentsOfFile: CryptoTestSupport.fixture("certificate-only.p12"), password: "fixture")
        }
        #expect(throws: CryptoError.malformedPKCS12) {
            try PKCS12Bundle(contentsOfFile: CryptoTestSupport.fixture("chain.pem"), password: "fixture")
        }
        #expect(throws: CryptoError.fileNotFound) { try PKCS12Bundle(contentsOfFile: "/nonexistent.p12", password: "") }
    }

    @Test("TLS private keys of any algorithm load; encrypted ones with their password")
    func privateKeys() throws {
        let rsa = try PrivateKeyPEM(contentsOfFile: CryptoTestSupport.fixture("rsa-key.pem"))
        #expect(rsa.algorithm == "RSA 2048-bit")
        #expect(try PrivateKeyPEM(contentsOfFile: CryptoTestSupport.fixture("p384-key.p8")).algorithm == "EC secp384r1")
        let encrypted = try PrivateKeyPEM(
            contentsOfFile: CryptoTestSupport.fixture("encrypted-key.p8"), password: "fixture")
        let plain = try PrivateKeyPEM(contentsOfFile: CryptoTestSupport.sample("AuthKey_TEST123456.p8"))
        #expect(encrypted.pkcs8DER == plain.pkcs8DER)
        #expect(try plain.pem() == CryptoTestSupport.contents(of: CryptoTestSupport.sample("AuthKey_TEST123456.p8")))
        #expect(throws: CryptoError.encryptedKey) {
            try PrivateKeyPEM(contentsOfFile: CryptoTestSupport.fixture("encrypted-key.p8"), password: "wrong")
        }
        #expect(throws: CryptoError.encryptedKey) {
            try PrivateKeyPEM(contentsOfFile: CryptoTestSupport.fixture("encrypted-key.p8"))
        }
        #expect(throws: CryptoError.notAPrivateKey) {
            try PrivateKeyPEM(contentsOfFile: CryptoTestSupport.fixture("rsa-cert.pem"))
        }
    }
}
