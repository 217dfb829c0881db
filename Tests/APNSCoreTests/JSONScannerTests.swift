import Foundation
import Testing

@testable import APNSCore

@Suite("JSONScanner")
struct JSONScannerTests {
    private func isValid(_ bytes: [UInt8]) -> Bool {
        (try? JSONScanner(bytes).scanDocument(in: 0..<bytes.count)) != nil
    }

    @Test(
        "valid documents",
        arguments: [
            "{}", "[]", "0", "-0", "1.5e10", "-12.0E-3", "true", "false", "null", #""""#,
            #""\u00e9\ud83d\ude00\n\t\"\\\/""#,
            #"{"a":[1,{"b":null}],"c":"é😀"}"#, " \t\r\n{ \"a\" : 1 } \n",
        ])
    func valid(text: String) {
        #expect(isValid(Array(text.utf8)), "\(text)")
    }

    @Test(
        "invalid documents",
        arguments: [
            "", "{", "}", "[1,]", "{\"a\"}", "{\"a\":}", "{a:1}", "01", "1.", ".5", "1e", "+1", "tru", "nul",
            "\"abc", "\"\\x\"", "\"\\u12g4\"", "\"a\u{01}b\"", "{\"a\":1}}", "[1 2]", "{\"a\":1 \"b\":2}", "NaN",
        ])
    func invalid(text: String) {
        #expect(!isValid(Array(text.utf8)), "\(text)")
    }

    @Test("invalid UTF-8 inside strings is rejected")
    func invalidUTF8() {
        let cases: [[UInt8]] = [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xE0, 0x80, 0xAF, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xC3, 0x22],
        ]
        for bytes in cases { #expect(!isValid(bytes), "\(bytes)") }
        #expect(isValid([0x22, 0xC3, 0xA9, 0x22]))
        #expect(isValid([0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]))
    }

    @Test("hostile nesting is rejected without exhausting the stack")
    func deepNesting() {
        let deep = Array(repeating: UInt8(ascii: "["), count: 100_000)
        #expect(!isValid(deep))
        let ok = Array(repeating: UInt8(ascii: "["), count: 64) + Array(repeating: UInt8(ascii: "]"), count: 64)
        #expect(isValid(ok))
    }

    @Test("members and ranges point at the bytes as written")
    func members() throws {
        let text = #"{ "token" : "ab\u0063d", "payload" :  {"aps" : { "alert":"x" }} ,"n":-1.5}"#
        let bytes = Array(text.utf8)
        let scanner = JSONScanner(bytes)
        let object = try scanner.scanDocument(in: 0..<bytes.count)
        var found: [String: String] = [:]
        scanner.forEachMember(of: object) { key, value in
            found[scanner.decodeString(key)] = String(decoding: bytes[value.range], as: UTF8.self)
        }
        #expect(found == ["token": #""ab\u0063d""#, "payload": #"{"aps" : { "alert":"x" }}"#, "n": "-1.5"])
        var token: JSONScanner.Value?
        scanner.forEachMember(of: object) { key, value in if scanner.string(key, equals: "token") { token = value } }
        let tokenValue = try #require(token)
        #expect(tokenValue.hasEscapes)
        #expect(scanner.decodeString(tokenValue) == "abcd")
        #expect(scanner.string(tokenValue, equals: "abcd"))
    }

    @Test(
        "lone surrogate escapes: U+FFFD when decoded leniently, nil when decoded exactly; pairs decode",
        arguments: [
            (#""\ud800""#, nil as String?), (#""a\udc00b""#, nil), (#""\ud83dx""#, nil), (#""\ud83d\u0041""#, nil),
            (#""\ude00\ud83d""#, nil), (#""\ud83d\ude00""#, "\u{1F600}"), (#""\u00e9\n""#, "é\n"),
            (#""plain""#, "plain"),
        ])
    func loneSurrogates(json: String, exact: String?) throws {
        let bytes = Array(json.utf8)
        let scanner = JSONScanner(bytes)
        let value = try scanner.scanDocument(in: 0..<bytes.count)
        #expect(scanner.decodeStringExactly(value) == exact)
        if exact == nil {
            #expect(scanner.decodeString(value).unicodeScalars.contains("\u{FFFD}"))
        } else {
            #expect(scanner.decodeString(value) == exact)
        }
    }

    @Test("the eight-byte mask is zero exactly when no byte needs a look, and its lowest bit marks the first that does")
    func specialByteMask() {
        func isSpecial(_ byte: UInt8) -> Bool { byte == 0x22 || byte == 0x5C || byte < 0x20 || byte >= 0x80 }
        func firstFlagged(_ bytes: [UInt8]) -> Int? {
            let word = bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }  // byte 0 lowest, as loaded
            let mask = JSONScanner.specialByteMask(word)
            return mask == 0 ? nil : mask.trailingZeroBitCount / 8
        }
        for value in 0...255 {
            for place in 0..<8 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[place] = UInt8(value)
                #expect(firstFlagged(bytes) == (isSpecial(UInt8(value)) ? place : nil), "byte \(value) at \(place)")
            }
        }
        var generator = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            // Mostly printable ASCII, so words without any special byte are common too.
            let bytes = (0..<8).map { _ in
                let random = generator.next()
                return random % 12 == 0 ? UInt8(truncatingIfNeeded: random >> 8) : UInt8(0x20 + (random >> 8) % 0x60)
            }
            #expect(firstFlagged(bytes) == bytes.firstIndex(where: isSpecial), "\(bytes)")
        }
    }

    @Test("a string's quote, escapes, control bytes and UTF-8 are found at every offset, across eight-byte words")
    func stringsAtEveryOffset() throws {
        let cases: [(middle: [UInt8], valid: Bool, escapes: Bool)] = [
            ([], true, false), (Array("\\n".utf8), true, true), (Array("\\u00e9".utf8), true, true),
            (Array("é😀".utf8), true, false), ([0x01], false, false), ([0x1F], false, false), ([0x7F], true, false),
            ([0xFF], false, false), ([0xC3], false, false), (Array("\\x".utf8), false, false),
        ]
        for (middle, valid, escapes) in cases {
            for before in 0..<18 {
                for after in [0, 1, 7, 8, 9] {
                    let text =
                        [0x22] + [UInt8](repeating: 0x61, count: before) + middle
                        + [UInt8](repeating: 0x62, count: after) + [0x22]
                    let value = try? JSONScanner(text).scanDocument(in: 0..<text.count)
                    #expect((value != nil) == valid, "\(text)")
                    if let value {
                        #expect(value.range == 0..<text.count && value.hasEscapes == escapes, "\(text)")
                    }
                    // Without its closing quote the string never ends, whatever came before.
                    #expect((try? JSONScanner(Array(text.dropLast())).scanDocument(in: 0..<text.count - 1)) == nil)
                    // As a key and as a value inside an object, bytes after it: the word loads reach past the string.
                    let object = [0x7B] + text + Array(#":1,"k":"#.utf8) + text + Array(#","zzzzzzzz":1}"#.utf8)
                    let scanner = JSONScanner(object)
                    var members: [(key: JSONScanner.Value, value: JSONScanner.Value)] = []
                    let scanned = try? scanner.scanDocument(in: 0..<object.count, reportingMembersTo: 1) {
                        _, key, value in
                        members.append((key, value))
                    }
                    #expect((scanned != nil) == valid, "\(object)")
                    if scanned != nil {
                        let valueStart = 1 + text.count + 7
                        #expect(members.count == 3)
                        #expect(
                            members.first?.key.range == 1..<1 + text.count && members.first?.key.hasEscapes == escapes)
                        #expect(members.dropFirst().first?.value.range == valueStart..<valueStart + text.count)
                        #expect(members.dropFirst().first?.value.hasEscapes == escapes)
                    }
                }
            }
        }
    }

    @Test("a short string's word holds exactly its bytes, wherever it lies; escapes and longer strings have none")
    func shortWords() throws {
        #expect(JSONScanner.word(Array("aps".utf8)) == 0x73_7061)
        #expect(ContentAvailableOnlyCheck.apsWord == JSONScanner.word(Array("aps".utf8)))
        for length in 0...10 {
            for padding in [0, 1, 7, 8, 20] {
                let content = (0..<length).map { UInt8(0x61 + $0) }
                for (text, escaped) in [(content, false), (Array("\\n".utf8) + content, true)] {
                    let bytes = [0x22] + text + [0x22] + [UInt8](repeating: 0x20, count: padding)
                    let scanner = JSONScanner(bytes)
                    let value = try scanner.scanDocument(in: 0..<bytes.count)
                    let expected = !escaped && length <= 8 ? JSONScanner.word(content) : nil
                    #expect(scanner.shortWord(value) == expected, "\(length) \(padding) \(escaped)")
                }
            }
        }
    }

    @Test("agrees with JSONSerialization on random mutations of a valid document")
    func differential() {
        let seed = Array(
            #"{"aps":{"alert":{"title":"Hé","body":"x\"y"},"badge":12},"list":[1,2.5,-3e2,true,null]}"#.utf8)
        var generator = SplitMix64(seed: 42)
        let alphabet = Array(#"{}[]":,.-+eE0123456789 tfnrule\"#.utf8)
        var disagreements: [String] = []
        for _ in 0..<5000 {
            var bytes = seed
            for _ in 0..<Int(generator.next() % 3 + 1) {
                let index = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[index] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: index)
                }
                if bytes.isEmpty { bytes = seed }
            }
            let ours = isValid(bytes)
            let theirs = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
            // Foundation accepts trailing commas ("[1,]", "{…,}"), which RFC 8259 forbids: not a disagreement.
            if theirs && !ours && Self.hasTrailingComma(bytes) { continue }
            if ours != theirs { disagreements.append(String(decoding: bytes, as: UTF8.self)) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }

    private static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        let significant = bytes.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return zip(significant, significant.dropFirst()).contains {
            $0.0 == UInt8(ascii: ",") && ($0.1 == UInt8(ascii: "}") || $0.1 == UInt8(ascii: "]"))
        }
    }
}
