import APNSCore
import APNSCrypto
import Foundation
import Testing

/// Encoding against Foundation, round trips, strict decoding.
@Suite("base64url")
struct Base64URLTests {
    @Test("encodes like Foundation's base64 with the URL alphabet and no padding, and round-trips, for random lengths")
    func randomRoundTrips() throws {
        var generator = SplitMix64(seed: 0xB64)
        for _ in 0..<2000 {
            let count = Int.random(in: 0...300, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(encoded.utf8.count == Base64URL.encodedLength(of: count))
            let reference = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(encoded == reference)
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test("the characters that differ from standard base64 appear and decode")
    func urlAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
        #expect(Base64URL.encode([]) == "")
        #expect(Base64URL.decode("") == [])
    }

    @Test("decoding is strict: padding, foreign characters, impossible lengths and stray bits are refused")
    func strictDecoding() {
        #expect(Base64URL.decode("QQ==") == nil)
        #expect(Base64URL.decode("QQ") == [0x41])
        #expect(Base64URL.decode("+/8A") == nil)
        #expect(Base64URL.decode("QUJD RA") == nil)
        #expect(Base64URL.decode("QUJDR") == nil)
        #expect(Base64URL.decode("QR") == nil, "the unused low bits of a final group must be zero")
        #expect(Base64URL.decode("QUI") == [0x41, 0x42])
        #expect(Base64URL.decode("QUJ") == nil)
        #expect(Base64URL.decode(Array("é".utf8)) == nil)
    }
}
