import APNSCrypto
import Foundation
import Testing

/// ES256 tokens: signatures, exact JSON, cross-checks with the openssl command line, the verifier.
@Suite("ES256 provider tokens")
struct ProviderTokenSignerTests {
    static let keyID = "TEST123456"
    static let teamID = "TEAMID1234"

    let key: ProviderKey
    let signer: ProviderTokenSigner

    init() throws {
        key = try ProviderKey(contentsOfFile: CryptoTestSupport.sample("AuthKey_TEST123456.p8"))
        signer = try ProviderTokenSigner(key: key, keyID: Self.keyID, teamID: Self.teamID)
    }

    @Test("a thousand tokens: 64-byte r||s signatures that all verify")
    func thousandTokensVerify() throws {
        let publicKey = try ProviderPublicKey(contentsOfFile: CryptoTestSupport.sample("AuthKey_TEST123456.pub.pem"))
        var signatures = Set<[UInt8]>()
        for index in 0..<1000 {
            let token = try signer.sign(issuedAt: 1_700_000_000 + Int64(index))
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            try #require(parts.count == 3)
            let signature = try #require(Base64URL.decode(String(parts[2])))
            try #require(signature.count == 64, "token \(index) has a \(signature.count)-byte signature")
            signatures.insert(signature)
            let verification = try ProviderTokenVerifier.verify(token, with: publicKey)
            try #require(verification.signatureIsValid, "token \(index) does not verify")
            #expect(verification.token.issuedAt == 1_700_000_000 + Int64(index))
        }
        #expect(signatures.count == 1000, "ECDSA signatures are randomised; repeats mean a broken signer")
    }

    @Test("header and claims decode to exactly alg, kid and iss, iat")
    func headerAndClaimsHaveExactlyFourFields() throws {
        let token = try signer.sign(issuedAt: 1_437_179_036)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        let headerBytes = try #require(Base64URL.decode(parts[0]))
        let claimsBytes = try #require(Base64URL.decode(parts[1]))
        #expect(String(decoding: headerBytes, as: UTF8.self) == #"{"alg":"ES256","kid":"TEST123456"}"#)
        #expect(String(decoding: claimsBytes, as: UTF8.self) == #"{"iss":"TEAMID1234","iat":1437179036}"#)

        let header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any])
        #expect(Set(header.keys) == ["alg", "kid"])
        #expect(Set(claims.keys) == ["iss", "iat"])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == Self.keyID)
        #expect(claims["iss"] as? String == Self.teamID)
        #expect((claims["iat"] as? NSNumber)?.int64Value == 1_437_179_036)
        #expect(!(claims["iat"] is String), "iat is a JSON number")
    }

    @Test("the openssl command line verifies our signatures, and we verify its signatures")
    func crossCheckWithOpenSSLCommandLine() throws {
        let directory = try CryptoTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicKeyPath = CryptoTestSupport.sample("AuthKey_TEST123456.pub.pem")

        // Ours -> openssl: the first token, and the first whose r, and whose s, starts with a zero byte (the
        // left-padded halves that unpadded encoders get wrong). One half in 256 starts with zero, so 4000 tokens
        // all but guarantee both cases.
        var tokens: [String] = []
        var sawPaddedR = false
        var sawPaddedS = false
        for issuedAt in Int64(1_700_000_000)..<1_700_004_000 where !(sawPaddedR && sawPaddedS) {
            let token = try signer.sign(issuedAt: issuedAt)
            let signature = try #require(Base64URL.decode(String(token.split(separator: ".")[2])))
            if tokens.isEmpty || (!sawPaddedR && signature[0] == 0) || (!sawPaddedS && signature[32] == 0) {
                sawPaddedR = sawPaddedR || signature[0] == 0
                sawPaddedS = sawPaddedS || signature[32] == 0
                tokens.append(token)
            }
        }
        #expect(sawPaddedR && sawPaddedS)
        for (index, token) in tokens.enumerated() {
            let parts = token.split(separator: ".").map(String.init)
            let raw = try #require(Base64URL.decode(parts[2]))
            let message = directory.appendingPathComponent("message-\(index)")
            let signature = directory.appendingPathComponent("signature-\(index).der")
            try Data((parts[0] + "." + parts[1]).utf8).write(to: message)
            try Data(ECDSASignatureDER.encode(rawSignature: raw)).write(to: signature)
            let result = try CryptoTestSupport.run([
                "openssl", "dgst", "-sha256", "-verify", publicKeyPath, "-signature", signature.path, message.path,
            ])
            #expect(result.status == 0, "openssl rejected token \(index): \(result.text) \(result.stderr)")
            #expect(result.text.contains("Verified OK"))
        }

        // openssl -> ours: a DER signature made by the command line, turned into r||s, passes our verifier.
        let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJURUFNSUQxMjM0In0".utf8)
        let messagePath = directory.appendingPathComponent("openssl-message")
        try Data(message).write(to: messagePath)
        let signed = try CryptoTestSupport.run([
            "openssl", "dgst", "-sha256", "-sign", CryptoTestSupport.sample("AuthKey_TEST123456.p8"), messagePath.path,
        ])
        try #require(signed.status == 0, "\(signed.stderr)")
        let raw = try #require(ECDSASignatureDER.decode(Array(signed.stdout)))
        #expect(key.publicKey.isValidSignature(raw, for: message))
        var tampered = message
        tampered[0] ^= 1
        #expect(!key.publicKey.isValidSignature(raw, for: tampered))
    }

    @Test("a token signed by another key, or altered, does not verify")
    func foreignAndAlteredTokensFail() throws {
        let other = try ProviderKey.generate()
        let token = try signer.sign(issuedAt: 1_700_000_000)
        #expect(try ProviderTokenVerifier.verify(token, with: key.publicKey).signatureIsValid)
        #expect(try !ProviderTokenVerifier.verify(token, with: other.publicKey).signatureIsValid)

        let parts = token.split(separator: ".").map(String.init)
        let otherClaims = Base64URL.encode(Array(#"{"iss":"TEAMID1234","iat":1700000001}"#.utf8))
        let altered = [parts[0], otherClaims, parts[2]].joined(separator: ".")
        let verification = try ProviderTokenVerifier.verify(altered, with: key.publicKey)
        #expect(verification.token.issuedAt == 1_700_000_001)
        #expect(!verification.signatureIsValid)
    }

    @Test("the verifier reports what a malformed token lacks")
    func verifierRejectsMalformedTokens() throws {
        let token = try signer.sign(issuedAt: 1_700_000_000)
        let parts = token.split(separator: ".").map(String.init)
        func segment(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }

        #expect(throws: CryptoError.malformedToken) { try ProviderTokenVerifier.parse(parts[0] + "." + parts[1]) }
        #expect(throws: CryptoError.malformedToken) { try ProviderTokenVerifier.parse(token + ".x") }
        #expect(throws: CryptoError.malformedToken) {
            try ProviderTokenVerifier.parse(parts[0] + "=." + parts[1] + "." + parts[2])
        }
        #expect(throws: CryptoError.unsupportedTokenAlgorithm) {
            try ProviderTokenVerifier.parse(
                [segment(#"{"alg":"HS256","kid":"TEST123456"}"#), parts[1], parts[2]].joined(separator: "."))
        }
        #expect(throws: CryptoError.malformedToken) {
            try ProviderTokenVerifier.parse([segment(#"{"alg":"ES256"}"#), parts[1], parts[2]].joined(separator: "."))
        }
        // A string of digits is an iat (APNSwift wrote it so from 2022 to mid-2026; APNs accepts it); nothing else is.
        let quoted = try ProviderTokenVerifier.parse(
            [parts[0], segment(#"{"iss":"TEAMID1234","iat":"1700000000"}"#), parts[2]].joined(separator: "."))
        #expect(quoted.issuedAt == 1_700_000_000 && quoted.issuedAtIsString)
        #expect(throws: CryptoError.malformedToken) {
            try ProviderTokenVerifier.parse(
                [parts[0], segment(#"{"iss":"TEAMID1234","iat":"17e8"}"#), parts[2]].joined(separator: "."))
        }
        #expect(throws: CryptoError.malformedToken) {
            try ProviderTokenVerifier.parse(
                [parts[0], segment(#"{"iss":"TEAMID1234","iat":1.5}"#), parts[2]].joined(separator: "."))
        }
        // A DER signature (what two early APNSwift releases sent) is refused by its length.
        let raw = try #require(Base64URL.decode(parts[2]))
        let der = Base64URL.encode(ECDSASignatureDER.encode(rawSignature: raw))
        #expect(throws: CryptoError.malformedToken) {
            try ProviderTokenVerifier.parse(parts[0] + "." + parts[1] + "." + der)
        }

        let parsed = try ProviderTokenVerifier.parse(token)
        #expect(!parsed.issuedAtIsString)
        #expect(parsed.keyID == Self.keyID && parsed.teamID == Self.teamID && parsed.issuedAt == 1_700_000_000)
        #expect(parsed.signingInput == Array((parts[0] + "." + parts[1]).utf8))
        #expect(parsed.signature == raw)
    }

    @Test("the signer refuses ids that are not 10 letters or digits, naming which one")
    func signerValidatesIdentifiers() throws {
        #expect(throws: CryptoError.invalidKeyID) {
            try ProviderTokenSigner(key: key, keyID: "TEST12345", teamID: Self.teamID)
        }
        #expect(throws: CryptoError.invalidTeamID) {
            try ProviderTokenSigner(key: key, keyID: Self.keyID, teamID: "TEAM\"ID123")
        }
        do {
            _ = try ProviderTokenSigner(key: key, keyID: Self.keyID, teamID: "TEAMID12345")
            Issue.record("an 11-character team id was accepted")
        } catch {
            #expect(error == .invalidTeamID)
            #expect(error.description.contains("team id"))
            #expect(error.description.contains("11 characters"))
        }
    }
}

/// An independent DER <-> r||s conversion for the cross-checks (not the code under test).
enum ECDSASignatureDER {
    static func encode(rawSignature raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }

    static func decode(_ der: [UInt8]) -> [UInt8]? {
        guard der.count > 2, der[0] == 0x30, Int(der[1]) == der.count - 2 else { return nil }
        var index = 2
        var raw: [UInt8] = []
        for _ in 0..<2 {
            guard index + 2 <= der.count, der[index] == 0x02 else { return nil }
            let length = Int(der[index + 1])
            guard index + 2 + length <= der.count else { return nil }
            let value = Array(der[(index + 2)..<(index + 2 + length)].drop { $0 == 0 })
            guard value.count <= 32 else { return nil }
            raw += [UInt8](repeating: 0, count: 32 - value.count) + value
            index += 2 + length
        }
        return index == der.count ? raw : nil
    }
}
