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

    @Test(
        "outside strings: JSON numbers and literals go in as they are",
        arguments: ["5", "-1.5e3", "0", "true", "false", "null"])
    func bareValues(value: String) throws {
        #expect(try render(#"{"badge":{{v}}}"#, ["v": value]) == #"{"badge":\#(value)}"#)
    }

    // Before: an empty cell went in as "" and other text as a quoted string, so "badge": {{badge}} sent
    // "badge":"" or "badge":"x" (valid JSON, wrong type). Now it is the record's input error, naming the column.
    @Test(
        "outside strings: an empty cell or any other text is TemplateValueInvalid, naming the column",
        arguments: ["", "007", " 5", "hello \"x\"", "1,5", "NaN", "{", "[1]", "\"s\""])
    func bareValuesRefused(value: String) throws {
        #expect {
            _ = try render(#"{"a":"{{v}}","badge":{{v}}}"#, ["v": value])
        } throws: { error in
            guard let error = error as? InputError, error.code == .templateValueInvalid else { return false }
            let named = error.detail.contains("column 'v'") && error.detail.contains("a number, true, false or null")
            return named
                && (value.isEmpty
                    ? error.detail.hasPrefix("empty value in column 'v'") : error.detail.contains("\"{{v}}\""))
        }
    }

    @Test("the same cell inside quotes is text, whatever it holds")
    func quotedPlaceholderTakesText() throws {
        #expect(try render(#"{"zip":"{{v}}"}"#, ["v": ""]) == #"{"zip":""}"#)
        #expect(try render(#"{"zip":"{{v}}"}"#, ["v": "007"]) == #"{"zip":"007"}"#)
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
        #expect(
            String(decoding: try parsed.render(["first name": "Ann", "n": "2"]), as: UTF8.self)
                == #"{"a":"Ann","b":2,"c":"2"}"#)
    }

    @Test("a missing variable is named")
    func missing() throws {
        #expect {
            _ = try template(#"{"a":"{{x}}","b":{{y}}}"#).render(["x": "1"])
        } throws: { error in
            (error as? InputError)?.code == .templateVariableMissing && "\(error)".contains("'y'")
        }
    }

    @Test(
        "templates that cannot work are rejected at load",
        arguments: [
            #"{"a":"{{x"}"#, #"{"a":{{}}}"#, #"{"a":{{"x"}}}"#, #"[{{x}}]"#, #"{"a":1"#, #"{"a":"x"} trailing"#,
            #"{ {{k}}: 1}"#, #"{"a":{{x}} {{y}}}"#, "", "\"just a string\"",
        ])
    func rejectedAtLoad(text: String) {
        #expect(throws: PipelineError.self) { try template(text) }
    }

    // Found by timed fuzzing: a value placeholder glued to a literal loaded (the dummy fill `0` made `60`), then a
    // string value rendered `[6"text"]`, so every CSV record of the campaign came out input_error.
    @Test(
        "a placeholder outside a string must stand where a whole JSON value can",
        arguments: [
            #"{"a":{{x}},"b":"","c":[6{{z}}]}"#, #"{"a":{{x}}5}"#, #"{"a":-{{x}}}"#, #"{"a":[{{x}}{{y}}]}"#,
            #"{"a":{{x}}"b"}"#, #"{"a":{{x}}{{y}}}"#,
        ])
    func valuePlaceholderGlued(text: String) {
        #expect {
            try template(text)
        } throws: { error in
            (error as? PipelineError)?.kind == .templateInvalid && "\(error)".contains("stands outside a string")
        }
    }

    @Test("value placeholders after ':', ',' or '[' and before ',', ']' or '}' render valid JSON or refuse the value")
    func valuePlaceholdersStandingAlone() throws {
        let parsed = try template("{\"a\": {{x}} ,\"b\":[ {{y}},{{x}} ],\"c\":{\"d\":{{y}}}}")
        for value in ["1", "-2.5e3", "text", "[", "}", "\"", "", "true"] {
            do {
                let out = try parsed.render(["x": value, "y": value])
                #expect((try? JSONScanner(out).scanDocument(in: 0..<out.count))?.kind == .object, "value \(value)")
            } catch {
                #expect(error.code == .templateValueInvalid, "value \(value): \(error)")
            }
        }
    }

    @Test("a filled template that breaks JSON is TemplateResultInvalid per record")
    func resultInvalid() throws {
        let parsed = try template(#"{"a":{{x}}}"#)
        let token = PipelineTestSupport.token(3)
        let record = PipelineTestSupport.parseLine(#"{"token":"\#(token)","vars":{"x":"ok"}}"#, template: parsed)
        #expect(record.notification != nil)
        // A vars value that is a JSON string stays a string outside quotes; a CSV cell must be a JSON scalar.
        #expect(throws: InputError.self) { try parsed.render(["x": "{"]) }
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
