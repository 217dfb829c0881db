import Testing

@testable import APNSCore

@Suite("Header values")
struct HeaderValueTests {
    @Test("every push type parses, case-insensitively, and unknown ones are rejected")
    func pushTypes() throws {
        for type in PushType.allCases {
            #expect(try PushType(parsing: type.rawValue) == type)
            #expect(try PushType(parsing: type.rawValue.uppercased()) == type)
        }
        #expect(PushType.allCases.count == 10)
        #expect(throws: InputError.self) { try PushType(parsing: "alerts") }
        #expect(throws: InputError.self) { try PushType(parsing: "") }
    }

    @Test(
        "topic suffixes follow APNS.md",
        arguments: [
            (PushType.alert, nil), (.background, nil), (.mdm, nil), (.voip, ".voip"), (.complication, ".complication"),
            (.fileprovider, ".pushkit.fileprovider"), (.location, ".location-query"),
            (.liveactivity, ".push-type.liveactivity"), (.pushtotalk, ".voip-ptt"), (.widgets, ".push-type.widgets"),
        ] as [(PushType, String?)])
    func suffixes(type: PushType, suffix: String?) throws {
        #expect(type.topicSuffix == suffix)
        let bundle = try Topic(validating: "com.example.app")
        if let suffix {
            #expect(throws: InputError.self) { try bundle.validate(for: type) }
            try Topic(validating: "com.example.app" + suffix).validate(for: type)
            #expect(try Topic.derived(bundleID: "com.example.app", pushType: type).value == "com.example.app" + suffix)
        } else {
            try bundle.validate(for: type)
            #expect(try Topic.derived(bundleID: "com.example.app", pushType: type) == bundle)
        }
    }

    @Test("a bare suffix is not a topic")
    func bareSuffix() throws {
        #expect(throws: InputError.self) { try Topic(validating: ".voip").validate(for: .voip) }
        #expect(throws: InputError.self) { try Topic(validating: "") }
        #expect(throws: InputError.self) { try Topic(validating: "com.example app") }
    }

    @Test("payload limits: 4096, and 5120 for voip")
    func payloadLimits() {
        for type in PushType.allCases {
            #expect(type.maximumPayloadBytes == (type == .voip ? 5120 : 4096))
        }
    }

    @Test("priorities 10, 5, 1 only")
    func priorities() throws {
        #expect(try Priority(parsing: "10") == .immediate)
        #expect(try Priority(parsing: "5") == .powerAware)
        #expect(try Priority(parsing: "1") == .powerFirst)
        for bad in ["0", "2", "11", "", "ten", "-5", "10.0"] {
            #expect(throws: InputError.self) { try Priority(parsing: bad) }
        }
        #expect(throws: InputError.self) { try Priority(validating: 3) }
    }

    @Test("expiration: epoch seconds, 0 allowed")
    func expiration() throws {
        #expect(try Expiration(parsing: "0").epochSeconds == 0)
        #expect(try Expiration(parsing: "1767225600").epochSeconds == 1_767_225_600)
        #expect(try Expiration(epochSeconds: 0) == .immediately)
        for bad in ["", "-1", "1.5", "soon", "99999999999", " 1"] {
            #expect(throws: InputError.self) { try Expiration(parsing: bad) }
        }
        #expect(throws: InputError.self) { try Expiration(epochSeconds: -1) }
    }

    @Test("collapse id: 1 to 64 bytes")
    func collapseID() throws {
        #expect(try CollapseID(validating: String(repeating: "x", count: 64)).value.count == 64)
        #expect(try CollapseID(validating: "score-update").value == "score-update")
        // 22 three-byte characters: 66 bytes, though only 22 characters.
        #expect(throws: InputError.self) { try CollapseID(validating: String(repeating: "€", count: 22)) }
        #expect(throws: InputError.self) { try CollapseID(validating: String(repeating: "x", count: 65)) }
        #expect(throws: InputError.self) { try CollapseID(validating: "") }
        #expect(throws: InputError.self) { try CollapseID(validating: "a\nb") }
    }

    @Test(
        "collapse id: RFC 9113 field-value rules; no blank at either end, no control character",
        arguments: [
            " promo", "promo ", "\tpromo", "promo\t", "pro\rmo", "pro\nmo", "pro\u{0}mo", "pro\u{7F}mo",
            "pro\u{85}mo", "pro\u{9B}mo", " ",
        ])
    func collapseIDFieldValueRules(value: String) {
        #expect(throws: InputError.self) { try CollapseID(validating: value) }
        do {
            _ = try CollapseID(validating: value)
        } catch {
            #expect(error.code == .collapseIDInvalid)
            #expect(!error.detail.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        }
    }

    @Test("no header value type takes a blank at either end, CR, LF or NUL", arguments: [" ", "\t", "\r\n", "\u{0}"])
    func everyHeaderRejectsForbiddenBytes(bad: String) throws {
        for (good, parse) in [
            ("com.example.app", { (text: String) throws(InputError) in _ = try Topic(validating: text) }),
            ("alert", { (text: String) throws(InputError) in _ = try PushType(parsing: text) }),
            ("10", { (text: String) throws(InputError) in _ = try Priority(parsing: text) }),
            ("1767225600", { (text: String) throws(InputError) in _ = try Expiration(parsing: text) }),
            (
                "123e4567-e89b-12d3-a456-426614174000",
                { (text: String) throws(InputError) in _ = try APNSID(parsing: text) }
            ),
            ("promo", { (text: String) throws(InputError) in _ = try CollapseID(validating: text) }),
        ] as [(String, (String) throws(InputError) -> Void)] {
            try parse(good)
            for text in [bad + good, good + bad] {
                #expect(throws: InputError.self, "\(text.debugDescription)") { try parse(text) }
            }
        }
    }

    @Test("collapse id: inner blanks and any other Unicode text are fine")
    func collapseIDInnerBlanks() throws {
        #expect(try CollapseID(validating: "promo 2026").value == "promo 2026")
        #expect(try CollapseID(validating: "caf\u{E9} \u{1F600}").value == "caf\u{E9} \u{1F600}")
    }

    @Test("apns-id: UUIDs, normalised to lowercase")
    func apnsID() throws {
        let id = try APNSID(parsing: "123E4567-E89B-12D3-A456-426614174000")
        #expect(id.description == "123e4567-e89b-12d3-a456-426614174000")
        for bad in [
            "", "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g",
            "123e4567-e89b-12d3-a456-4266141740000", "123e4567-e89b-12d3a-456-426614174000",
        ] {
            #expect(throws: InputError.self) { try APNSID(parsing: bad) }
        }
    }

    @Test("random apns-ids are canonical version-4 UUIDs")
    func randomAPNSID() throws {
        var generator = SplitMix64(seed: 7)
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = APNSID.random(using: &generator)
            #expect(try APNSID(parsing: id.description) == id)
            #expect(id.bytes[14] == UInt8(ascii: "4"))
            #expect(Array("89ab".utf8).contains(id.bytes[19]), "variant 10")
            seen.insert(id.description)
        }
        #expect(seen.count == 1000)
    }

    @Test("a random apns-id spells its two words in order, with the version and variant bits set")
    func randomAPNSIDDigits() {
        struct Words: RandomNumberGenerator {
            var words: [UInt64] = [0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210]
            mutating func next() -> UInt64 { words.removeFirst() }
        }
        var generator = Words()
        #expect(APNSID.random(using: &generator).description == "01234567-89ab-4def-bedc-ba9876543210")
    }
}
