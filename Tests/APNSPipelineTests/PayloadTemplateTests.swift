import APNSCore
import Testing
@testable import APNSPipeline

@Suite("Payload template")
struct PayloadTemplateTests {
    private func template(_ text: String) throws -> PayloadTemplate {
        try PayloadTemplate(bytes: Array(text.utf8))
    }

    private func render(_ text: String, _ values: [String: String]) throws -> String {
        String(decoding: try template(text).render(values), as: UTF8.self)
    }

    @Test("values inside strings are JSON-escaped: quotes, backslashes, newlines, control characters, unicode")
    func escapingInsideStrings() throws {
        let out = try render(#"{"aps":{"alert":"Hi {{name}}!"}}"#, ["name": "a\"b\\c\nd\r\te\u{01}f\u{1F}é😀/"])
        #expect(out == #"{"aps":{"alert":"Hi a\"b\\c\nd\r\te\u0001f\u001fé😀/!"}}"#)
        #expect((try? JSONScanner(Array(out.utf8)).scanDocument(in: 0..<out.utf8.count)) != nil)
    }

    @Test("outside strings: JSON numbers and literals go in as they are, anything else as a quoted string",
          arguments: [
              ("5", "5"), ("-1.5e3", "-1.5e3"), ("true", "true"), ("null", "null"), ("007", "\"007\""),
              ("", "\"\""), (" 5", "\" 5\""), ("hello \"x\"", #""hello \"x\"""#), ("1,5", "\"1,5\""), ("NaN", "\"NaN\""),
          ])
    func bareValues(value: String, inserted: String) throws {
        #expect(try render(#"{"badge":{{v}}}"#, ["v": value]) == #"{"badge":\#(inserted)}"#)
    }

    @Test("white space outside strings is dropped at load; inside strings it stays")
    func minified() throws {
        let out = try render("{\n  \"aps\" : {\n    \"alert\" : \"a  b {{x}}\"\n  }\n}\n", ["x": "1"])
        #expect(out == #"{"aps":{"alert":"a  b 1"}}"#)
    }

    @Test("names: spaces around are trimmed, repeated names share one variable, spaces inside are allowed")
    func names() throws {
        let parsed = try template(#"{"a":"{{ first name }}","b":{{n}},"c":"{{n}}"}"#)
        #expect(parsed.variableNames == ["first name", "n"])
        #expect(String(decoding: try parsed.render(["first name": "Ann", "n": "2"]), as: UTF8.self) == #"{"a":"Ann","b":2,"c":"2"}"#)
    }

    @Test("a missing variable is named")
    func missing() throws {
        #expect {
            _ = try template(#"{"a":"{{x}}","b":{{y}}}"#).render(["x": "1"])
        } throws: { error in
            (error as? InputError)?.code == .templateVariableMissing && "\(error)".contains("'y'")
        }
    }

    @Test("templates that cannot work are rejected at load", arguments: [
        #"{"a":"{{x"}"#, #"{"a":{{}}}"#, #"{"a":{{"x"}}}"#, #"[{{x}}]"#, #"{"a":1"#, #"{"a":"x"} trailing"#,
        #"{ {{k}}: 1}"#, #"{"a":{{x}} {{y}}}"#, "", "\"just a string\"",
    ])
    func rejectedAtLoad(text: String) {
        #expect(throws: PipelineError.self) { try template(text) }
    }

    @Test("a filled template that breaks JSON is TemplateResultInvalid per record")
    func resultInvalid() throws {
        let parsed = try template(#"{"a":{{x}}}"#)
        let token = PipelineTestSupport.token(3)
        let record = PipelineTestSupport.parseLine(#"{"token":"\#(token)","vars":{"x":"ok"}}"#, template: parsed)
        #expect(record.notification != nil)
        // A vars value that is a JSON string stays a string outside quotes; a CSV cell is sniffed. Both valid.
        let csvStyle = try parsed.render(["x": "{"])
        #expect(String(decoding: csvStyle, as: UTF8.self) == #"{"a":"{"}"#)
    }

    @Test("a value that makes the payload too big is PayloadTooLarge, not a template error")
    func tooLarge() throws {
        let parsed = try template(#"{"a":"{{x}}"}"#)
        let big = String(repeating: "é", count: 3000)
        let token = PipelineTestSupport.token(4)
        let record = PipelineTestSupport.parseLine(#"{"token":"\#(token)","vars":{"x":"\#(big)"}}"#, template: parsed)
        #expect(record.code == .payloadTooLarge)
    }
}
