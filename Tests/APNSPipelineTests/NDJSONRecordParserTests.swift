import APNSCore
import Testing

@testable import APNSPipeline

@Suite("NDJSON record parser")
struct NDJSONRecordParserTests {
    typealias Support = PipelineTestSupport
    let token = PipelineTestSupport.token(1)

    @Test("a minimal record takes the campaign defaults")
    func minimal() throws {
        let record = Support.parseLine(#"{"token":"\#(token)","payload":{"aps":{"alert":"hi"}}}"#, line: 7)
        let notification = try #require(record.notification)
        #expect(record.key.line == 7)
        #expect(notification.token.hex == token)
        #expect(notification.topic.value == "com.example.app")
        #expect(notification.pushType == .alert)
        #expect(notification.priority == nil)
        #expect(notification.expiration == nil)
        #expect(notification.payload == Array(#"{"aps":{"alert":"hi"}}"#.utf8))
    }

    @Test("every optional member is read and overrides the defaults")
    func allMembers() throws {
        let defaults = CampaignDefaults(
            topic: Support.defaultTopic, pushType: .alert, priority: .immediate,
            expiration: .absolute(try Expiration(epochSeconds: 5)), collapseID: try CollapseID(validating: "default")
        )
        let line =
            #"{"token":"\#(token.uppercased())","payload":{"aps":{}},"topic":"com.other.app.voip","push_type":"VoIP","priority":"5","expiration":1700000000,"collapse_id":"c1","apns_id":"123E4567-E89B-12D3-A456-426614174000","mine":{"x":1}}"#
        let notification = try #require(Support.parseLine(line, defaults: defaults).notification)
        #expect(notification.token.hex == token)
        #expect(notification.topic.value == "com.other.app.voip")
        #expect(notification.pushType == .voip)
        #expect(notification.priority == .powerAware)
        #expect(notification.expiration?.epochSeconds == 1_700_000_000)
        #expect(notification.collapseID?.value == "c1")
        #expect(notification.apnsID?.description == "123e4567-e89b-12d3-a456-426614174000")
    }

    @Test("the default topic gets the push type's suffix; background defaults to priority 5")
    func derivedTopicAndPriority() throws {
        let voip = try #require(
            Support.parseLine(#"{"token":"\#(token)","push_type":"voip","payload":{}}"#).notification)
        #expect(voip.topic.value == "com.example.app.voip")
        let background = #"{"token":"\#(token)","push_type":"background","payload":{"aps":{"content-available":1}}}"#
        let notification = try #require(Support.parseLine(background).notification)
        #expect(notification.priority == .powerAware)
        #expect(notification.topic.value == "com.example.app")
    }

    @Test("null members count as absent; numbers are accepted for priority and expiration")
    func nullsAndNumbers() throws {
        let line = #"{"token":"\#(token)","topic":null,"priority":10,"expiration":"0","payload":{"a":1}}"#
        let notification = try #require(Support.parseLine(line).notification)
        #expect(notification.topic.value == "com.example.app")
        #expect(notification.priority == .immediate)
        #expect(notification.expiration == .immediately)
    }

    @Test("payload bytes pass through byte for byte: white space, escapes, unicode, number forms")
    func payloadPassThrough() throws {
        let payload =
            #"{  "aps" : {"alert":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/","sound" :"é😀"} ,"n":[1.50, -0, 2E+3 ,true,null]\#t}"#
        let line = #"{"payload": "# + payload + #"   ,"token":"\#(token)"}"#
        let notification = try #require(Support.parseLine(line).notification)
        #expect(notification.payload == Array(payload.utf8))
    }

    @Test(
        "invalid records get the exact reason code",
        arguments: [
            (#"not json"#, InputError.Code.recordInvalidJSON),
            (#"{"token":"ab","#, .recordInvalidJSON),
            (#"[1,2]"#, .recordNotObject),
            (#""text""#, .recordNotObject),
            (#"{"payload":{}}"#, .tokenMissing),
            (#"{"token":null,"payload":{}}"#, .tokenMissing),
            (#"{"token":12345,"payload":{}}"#, .recordFieldInvalid),
            (#"{"token":"abc","payload":{}}"#, .tokenOddLength),
            (#"{"token":"zz","payload":{}}"#, .tokenNotHex),
            (#"{"token":"abcd","payload":{}}"#, .tokenTooShort),
            (#"{"token":"","payload":{}}"#, .tokenEmpty),
            (#"{"token":"TOKEN","push_type":"alerts","payload":{}}"#, .pushTypeUnknown),
            (#"{"token":"TOKEN","push_type":5,"payload":{}}"#, .recordFieldInvalid),
            (#"{"token":"TOKEN","priority":7,"payload":{}}"#, .priorityInvalid),
            (#"{"token":"TOKEN","priority":"high","payload":{}}"#, .priorityInvalid),
            (#"{"token":"TOKEN","priority":true,"payload":{}}"#, .recordFieldInvalid),
            (#"{"token":"TOKEN","expiration":-1,"payload":{}}"#, .expirationInvalid),
            (#"{"token":"TOKEN","expiration":99999999999,"payload":{}}"#, .expirationInvalid),
            (
                #"{"token":"TOKEN","collapse_id":"0123456789012345678901234567890123456789012345678901234567890123x","payload":{}}"#,
                .collapseIDTooLong
            ),
            (#"{"token":"TOKEN","apns_id":"not-a-uuid","payload":{}}"#, .apnsIDInvalid),
            (#"{"token":"TOKEN","topic":"has space","payload":{}}"#, .topicInvalid),
            (#"{"token":"TOKEN","topic":"com.x","push_type":"voip","payload":{}}"#, .topicSuffixMissing),
            (#"{"token":"TOKEN"}"#, .payloadMissing),
            (#"{"token":"TOKEN","payload":"{\"aps\":{}}"}"#, .payloadNotObject),
            (#"{"token":"TOKEN","payload":[]}"#, .payloadNotObject),
            (
                #"{"token":"TOKEN","payload":{"aps":{"content-available":1}},"push_type":"background","priority":10}"#,
                .priorityForbiddenForBackground
            ),
            (#"{"token":"TOKEN","payload":{},"token":"TOKEN"}"#, .recordFieldInvalid),
        ])
    func rejects(line: String, code: InputError.Code) {
        let record = Support.parseLine(line.replacingOccurrences(of: "TOKEN", with: token))
        #expect(record.code == code, "\(line): \(String(describing: record.error))")
    }

    @Test(
        "a collapse id HTTP/2 forbids, or holding an escaped lone surrogate, is CollapseIdInvalid",
        arguments: [
            #" promo"#, #"promo "#, #"\tpromo"#, #"pro\r\nmo"#, #"pro\u0000mo"#, #"\ud800"#, #"x\udc00y"#, #"\ud83dx"#,
            #"\ud83d\u0041"#,
        ])
    func forbiddenCollapseID(value: String) throws {
        let record = Support.parseLine(#"{"token":"\#(token)","collapse_id":"\#(value)","payload":{}}"#)
        #expect(record.code == .collapseIDInvalid, "\(value): \(String(describing: record.error))")
    }

    @Test("a collapse id with an escaped surrogate pair decodes to its character")
    func surrogatePairCollapseID() throws {
        let record = Support.parseLine(#"{"token":"\#(token)","collapse_id":"a\ud83d\ude00","payload":{}}"#)
        #expect(try #require(record.notification).collapseID?.value == "a\u{1F600}")
    }

    @Test("members written with escapes are decoded, each to its own text, several in one record")
    func escapedMembers() throws {
        // Each decoded member goes after the line's bytes; a wrong range would give one member another's text.
        let escapedToken = #"\u0030\u0031"# + token.dropFirst(2)
        let line =
            #"{"token":"\#(escapedToken)","topic":"com\u002Eother\/app","push_type":"\u0061lert","collapse_id":"c\u00e9","apns_id":"123E4567-E89B-12D3-A456-42661417400\u0030","payload":{}}"#
        let notification = try #require(Support.parseLine(line).notification)
        #expect(notification.token.hex == "01" + token.dropFirst(2))
        #expect(notification.topic.value == "com.other/app")
        #expect(notification.pushType == .alert)
        #expect(notification.collapseID?.value == "c\u{E9}")
        #expect(notification.apnsID?.description.lowercased() == "123e4567-e89b-12d3-a456-426614174000")

        let invalid = Support.parseLine(#"{"token":"\u0041b","topic":"com\u002Ex","priority":"\u0037","payload":{}}"#)
        #expect(invalid.code == .tokenTooShort)
        #expect(invalid.tokenText == "Ab")
        #expect(invalid.topicText == "com.x")

        // The line inside a reader's larger buffer, with other lines around it: the same fields.
        var parser = NDJSONRecordParser(defaults: Support.defaults)
        let buffer = Array("{}\n".utf8) + Array(line.utf8) + Array("\n{\"token\":\"x\"}\n".utf8)
        let inBuffer = parser.parse(buffer, range: 3..<(3 + line.utf8.count), key: RecordKey(fileIndex: 0, line: 2))
        #expect(inBuffer.notification == notification)
    }

    @Test("an invalid record echoes its token and topic text")
    func echoesTokenText() {
        let record = Support.parseLine(#"{"token":"<AB cd>","topic":"com.x","payload":{}}"#)
        #expect(record.code == .tokenTooShort)
        #expect(record.tokenText == "<AB cd>")
        #expect(record.topicText == "com.x")
    }

    @Test("a JSON error names the byte column")
    func jsonErrorColumn() throws {
        let record = Support.parseLine(#"{"token": x}"#)
        let error = try #require(record.error)
        #expect(error.code == .recordInvalidJSON)
        #expect(error.detail.hasSuffix("at column 11"), "\(error.detail)")
    }

    @Test("a topic is required when there is no default")
    func topicRequired() {
        let record = Support.parseLine(#"{"token":"\#(token)","payload":{}}"#, defaults: CampaignDefaults())
        #expect(record.code == .topicMissing)
    }

    @Test("payload size: 4096 bytes pass for alert, 4097 do not; voip takes 5120")
    func payloadSize() {
        func payload(_ size: Int) -> String {
            let filler = String(repeating: "x", count: size - #"{"a":""}"#.utf8.count)
            return #"{"a":"\#(filler)"}"#
        }
        #expect(Support.parseLine(#"{"token":"\#(token)","payload":\#(payload(4096))}"#).notification != nil)
        #expect(Support.parseLine(#"{"token":"\#(token)","payload":\#(payload(4097))}"#).code == .payloadTooLarge)
        let voip = #"{"token":"\#(token)","push_type":"voip","payload":\#(payload(5120))}"#
        #expect(Support.parseLine(voip).notification != nil)
        let tooBig = #"{"token":"\#(token)","push_type":"voip","payload":\#(payload(5121))}"#
        #expect(Support.parseLine(tooBig).code == .payloadTooLarge)
    }

    @Test("invalid UTF-8 inside or outside strings is RecordInvalidUtf8 with its column")
    func invalidUTF8() throws {
        var inside = Array(#"{"token":"\#(token)","payload":{"a":"x"#.utf8)
        inside += [0xC3, 0x28]
        inside += Array(#""}}"#.utf8)
        let record = Support.parseLine(bytes: inside)
        let error = try #require(record.error)
        #expect(error.code == .recordInvalidUTF8)
        #expect(error.detail.hasSuffix("column \(inside.firstIndex(of: 0xC3).map { $0 + 1 } ?? 0)"), "\(error.detail)")
        #expect(Support.parseLine(bytes: [0xFF] + Array(#"{}"#.utf8)).code == .recordInvalidUTF8)
        let overlong = Array(#"{"token":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8)
        #expect(Support.parseLine(bytes: overlong).code == .recordInvalidUTF8)
    }

    @Test("with a template, records without payload fill it from vars, keeping JSON types")
    func templateFromVars() throws {
        let template = try PayloadTemplate(
            bytes: Array(#"{"aps":{"alert":"Hi {{name}}","badge":{{count}}},"tag":{{tag}},"raw":{{obj}}}"#.utf8))
        let line = #"{"token":"\#(token)","vars":{"name":"A\"n\u00e9","count":3,"tag":"7","obj":{"k":[1]}}}"#
        let notification = try #require(Support.parseLine(line, template: template).notification)
        #expect(
            String(decoding: notification.payload, as: UTF8.self)
                == #"{"aps":{"alert":"Hi A\"n\u00e9","badge":3},"tag":"7","raw":{"k":[1]}}"#)
        // A payload member wins over the template.
        let own = try #require(
            Support.parseLine(#"{"token":"\#(token)","payload":{"x":1},"vars":{}}"#, template: template).notification)
        #expect(own.payload == Array(#"{"x":1}"#.utf8))
    }

    @Test("template problems: a missing variable is named; vars must be an object")
    func templateProblems() throws {
        let template = try PayloadTemplate(bytes: Array(#"{"aps":{"alert":"{{name}} {{other}}"}}"#.utf8))
        let missing = Support.parseLine(#"{"token":"\#(token)","vars":{"name":"x"}}"#, template: template)
        #expect(missing.code == .templateVariableMissing)
        #expect(missing.error?.detail.contains("'other'") == true)
        #expect(Support.parseLine(#"{"token":"\#(token)","vars":[1]}"#, template: template).code == .recordFieldInvalid)
        #expect(Support.parseLine(#"{"token":"\#(token)"}"#, template: template).code == .templateVariableMissing)
    }
}

@Suite("NDJSON record parser: matching member names")
struct NDJSONFieldNameTests {
    typealias Field = NDJSONRecordParser.Field

    /// The field `field(named:)` finds for the first key of `{<key>:1}`, followed by `padding` bytes of white space
    /// (none: the key's word load would pass the buffer's end, so it is assembled byte by byte).
    private func field(_ keyJSON: String, padding: Int) throws -> Field? {
        let bytes = Array("{\(keyJSON):1}".utf8) + [UInt8](repeating: 0x20, count: padding)
        let scanner = JSONScanner(bytes)
        var found: Field?? = nil
        _ = try scanner.scanDocument(in: 0..<bytes.count, reportingMembersTo: 1) { _, key, _ in
            if found == nil { found = .some(NDJSONRecordParser.field(named: key, in: scanner)) }
        }
        return try #require(found)
    }

    @Test("every name is found, written plainly or with escapes, wherever the key lies; near misses are not")
    func names() throws {
        let fields: [Field] = [
            .token, .payload, .topic, .vars, .pushType, .priority, .expiration, .collapseID, .apnsID,
        ]
        for padding in [0, 3, 16] {
            for field in fields {
                #expect(try self.field("\"\(field.rawValue)\"", padding: padding) == field)
                let escaped = "\\u00" + String(field.rawValue.utf8.first ?? 0, radix: 16) + field.rawValue.dropFirst()
                #expect(try self.field("\"\(escaped)\"", padding: padding) == field, "\(escaped)")
                // One byte changed, one missing, one more, the case changed: none is a member's name.
                let name = Array(field.rawValue.utf8)
                for miss in [
                    name.dropLast() + [0x5F], Array(name.dropLast()), name + [0x73],
                    [name[0] - 0x20] + name.dropFirst(),
                ] {
                    #expect(try self.field("\"\(String(decoding: miss, as: UTF8.self))\"", padding: padding) == nil)
                }
            }
            #expect(try self.field(#""""#, padding: padding) == nil)
            #expect(try self.field(#""tokens_and""#, padding: padding) == nil)
        }
    }

    @Test("the written-out words are the names' words")
    func words() {
        typealias Words = NDJSONRecordParser.FieldWord
        #expect(Words.token == JSONScanner.word(Array("token".utf8)))
        #expect(Words.payload == JSONScanner.word(Array("payload".utf8)))
        #expect(Words.topic == JSONScanner.word(Array("topic".utf8)))
        #expect(Words.vars == JSONScanner.word(Array("vars".utf8)))
        #expect(Words.priority == JSONScanner.word(Array("priority".utf8)))
        #expect(Words.apnsID == JSONScanner.word(Array("apns_id".utf8)))
    }
}
