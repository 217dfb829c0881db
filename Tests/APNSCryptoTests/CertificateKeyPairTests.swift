import APNSCrypto
import Foundation
import Testing

/// A certificate chain and its key from PEM files: two files, or one combined file in either order (as curl's
/// `--cert` takes it), with precise errors for a file without a key and for a key of another certificate.
@Suite("certificate and key from PEM files")
struct CertificateKeyPairTests {
    static func tls(_ name: String) -> String {
        CryptoTestSupport.packageRoot.appendingPathComponent("Tests/Fixtures/tls/\(name)").path
    }

    static func combined(_ names: [String], in directory: URL) throws -> String {
        var text = ""
        for name in names { text += try String(contentsOfFile: tls(name), encoding: .utf8) }
        let path = directory.appendingPathComponent("combined.pem").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("chain and key in two files")
    func separateFiles() throws {
        let pair = try CertificateKeyPair(chainPath: Self.tls("client-chain.pem"), keyPath: Self.tls("client.key"))
        #expect(pair.chain.certificates.count == 2)
        #expect(pair.keyPath == Self.tls("client.key"))
        #expect(!pair.keyIsInChainFile)
    }

    @Test(
        "one file with the chain then the key: the key is taken from it",
        arguments: [
            ["client-chain.pem", "client.key"], ["client.key", "client-chain.pem"],
        ])
    func combinedFile(order: [String]) throws {
        try CryptoTestSupport.withTemporaryDirectory { directory in
            let path = try Self.combined(order, in: directory)
            let pair = try CertificateKeyPair(chainPath: path)
            #expect(pair.keyIsInChainFile)
            #expect(pair.keyPath == path)
            #expect(pair.chain.certificates.count == 2, "the key block is not taken for a certificate")
            #expect(pair.privateKey.matches(pair.chain.leaf))
        }
    }

    @Test("a chain file without a key, and no key file: notAPrivateKey naming the file")
    func chainWithoutKey() throws {
        let path = Self.tls("client-chain.pem")
        #expect {
            try CertificateKeyPair(chainPath: path)
        } throws: { error in
            guard let error = error as? CryptoError else { return false }
            return error == .notAPrivateKey && error.description.contains(path)
                && error.description.contains("without a private key")
        }
    }

    @Test("a key of another certificate: keyDoesNotMatchCertificate, combined or separate")
    func mismatchedKey() throws {
        #expect(throws: CryptoError.keyDoesNotMatchCertificate) {
            try CertificateKeyPair(chainPath: Self.tls("client-chain.pem"), keyPath: Self.tls("server.key"))
        }
        try CryptoTestSupport.withTemporaryDirectory { directory in
            let path = try Self.combined(["client-chain.pem", "server.key"], in: directory)
            #expect(throws: CryptoError.keyDoesNotMatchCertificate) { try CertificateKeyPair(chainPath: path) }
        }
    }

    @Test("a missing chain file: fileNotFound")
    func missingFile() {
        #expect(throws: CryptoError.fileNotFound) {
            try CertificateKeyPair(chainPath: "/nonexistent/apns-bulk/client.pem")
        }
    }
}
