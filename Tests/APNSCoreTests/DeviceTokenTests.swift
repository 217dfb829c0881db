import Testing
@testable import APNSCore

@Suite("DeviceToken")
struct DeviceTokenTests {
    static let token32 = String(repeating: "0123456789abcdef", count: 4)

    @Test("accepts the forms users have", arguments: [
        (token32, token32),
        (token32.uppercased(), token32),
        ("<\(token32)>", token32),
        ("  \(token32)\t", token32),
        ("<01234567 89abcdef 01234567 89abcdef 01234567 89abcdef 01234567 89abcdef>", token32),
        ("01234567 89ABCDEF 01234567 89abcdef 01234567 89abcdef 01234567 89abcdef", token32),
    ] as [(String, String)])
    func accepts(input: String, expected: String) throws {
        let token = try DeviceToken(parsing: input)
        #expect(token.hex == expected)
        #expect(token.byteCount == 32)
    }

    @Test("accepts lengths other than 32 bytes")
    func variableLength() throws {
        for bytes in [16, 17, 32, 33, 100, 200] {
            let token = try DeviceToken(parsing: String(repeating: "ab", count: bytes))
            #expect(token.byteCount == bytes)
            #expect(token.hexBytes.count == bytes * 2)
        }
    }

    @Test("rejects with its own reason", arguments: [
        ("", InputError.Code.tokenEmpty),
        ("   ", .tokenEmpty),
        ("<>", .tokenEmpty),
        (String(token32.dropLast()), .tokenOddLength),
        (String(token32.dropLast()) + "g", .tokenNotHex),
        ("0x" + token32, .tokenNotHex),
        (token32 + "-", .tokenNotHex),
        (String(repeating: "ab", count: 15), .tokenTooShort),
        (String(repeating: "ab", count: 201), .tokenTooLong),
        ("<" + token32, .tokenNotHex),
    ] as [(String, InputError.Code)])
    func rejects(input: String, code: InputError.Code) {
        #expect(throws: InputError.self) { try DeviceToken(parsing: input) }
        do {
            _ = try DeviceToken(parsing: input)
        } catch {
            #expect(error.code == code, "\(input): \(error)")
            #expect(!error.detail.isEmpty)
        }
    }

    @Test("names the position of a bad character")
    func badCharacterPosition() {
        do {
            _ = try DeviceToken(parsing: "abcz")
            Issue.record("accepted a non-hex token")
        } catch {
            #expect(error.detail.contains("'z'"))
            #expect(error.detail.contains("position 4"))
        }
    }

    @Test("byte parsing agrees with string parsing")
    func bytesAgree() throws {
        let fromBytes = try DeviceToken(parsingBytes: Array(Self.token32.uppercased().utf8))
        #expect(fromBytes == (try DeviceToken(parsing: Self.token32)))
    }
}
