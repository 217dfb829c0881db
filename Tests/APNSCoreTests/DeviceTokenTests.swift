import Testing

@testable import APNSCore

@Suite("DeviceToken")
struct DeviceTokenTests {
    static let token32 = String(repeating: "0123456789abcdef", count: 4)

    @Test(
        "accepts the forms users have",
        arguments: [
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
            #expect(token.hex.utf8.count == bytes * 2)
        }
    }

    @Test(
        "rejects with its own reason",
        arguments: [
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

/// The slice overload of `DeviceToken(parsingBytes:)` (a record's member, copied once when already lowercase hex).
@Suite("Device token from a slice")
struct DeviceTokenSliceTests {
    static let token32 = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"

    @Test(
        "agrees with string parsing on every form, valid or not",
        arguments: [
            token32, token32.uppercased(), "<" + token32 + ">", " " + token32, token32.dropLast(2) + "0A", "a1b2 c3d4",
            String(token32.dropLast()), String(token32.dropLast()) + "g", String(repeating: "ab", count: 15),
            String(repeating: "ab", count: 16), String(repeating: "ab", count: 200),
            String(repeating: "ab", count: 201),
            "", "<>", "0x" + token32, token32 + "-", String(repeating: "0", count: 32) + "/:`@GZgz",
        ] as [String])
    func agrees(text: String) {
        // The slice sits inside a larger array, as a record's member does.
        let line = Array("xx\"".utf8) + Array(text.utf8) + Array("\"yy".utf8)
        let slice = line[3..<(line.count - 3)]
        let fromSlice = Result { () throws(InputError) in try DeviceToken(parsingBytes: slice) }
        let fromString = Result { () throws(InputError) in try DeviceToken(parsing: text) }
        switch (fromSlice, fromString) {
        case (.success(let a), .success(let b)): #expect(a == b && a.hex == b.hex, "\(text)")
        case (.failure(let a), .failure(let b)): #expect(a.code == b.code && a.detail == b.detail, "\(text)")
        default: Issue.record("\(text): slice \(fromSlice), string \(fromString)")
        }
    }

    @Test("every byte value next to the hex digits is judged the same way")
    func everyByte() {
        for byte in UInt8.min...UInt8.max {
            var bytes = Array(Self.token32.utf8)
            bytes[10] = byte
            let fromSlice = try? DeviceToken(parsingBytes: bytes[...])
            let fromArray = try? DeviceToken(parsingBytes: bytes)  // the generic, full parse
            #expect(fromSlice == fromArray, "byte \(byte)")
        }
    }
}
