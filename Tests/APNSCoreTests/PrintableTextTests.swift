import Testing

@testable import APNSCore

@Suite("Printable text")
struct PrintableTextTests {
    /// Whether `text` holds a character a terminal or a line-based reader would act on.
    static func hasRawControl(_ text: String) -> Bool {
        text.unicodeScalars.contains {
            $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}" || $0 == "\u{202E}"
        }
    }

    @Test(
        "C0, DEL, C1, line separators and bidi controls are escaped; everything else is kept",
        arguments: [
            ("plain text: 'ok' \\ / é 😀", "plain text: 'ok' \\ / é 😀"),
            ("x\nforged.ndjson:7: fake\u{1B}]0;pwned\u{07}", "x\\nforged.ndjson:7: fake\\u{1B}]0;pwned\\u{07}"),
            ("a\tb\rc\u{0}d\u{7F}", "a\\tb\\rc\\u{00}d\\u{7F}"),
            ("\u{9B}31m\u{85}", "\\u{9B}31m\\u{85}"),
            ("line\u{2028}sep\u{202E}txt", "line\\u{2028}sep\\u{202E}txt"),
        ])
    func escapes(input: String, expected: String) {
        #expect(PrintableText.escaping(input) == expected)
        #expect(!Self.hasRawControl(PrintableText.escaping(input)))
    }

    @Test("escaping is idempotent")
    func idempotent() {
        let once = PrintableText.escaping("a\n\u{1B}[2J\u{9B}\u{2029}")
        #expect(PrintableText.escaping(once) == once)
    }

    @Test("bytes: valid UTF-8 decoded, each invalid byte shown as \\xHH, controls escaped")
    func bytes() {
        let input: [UInt8] = [0x61, 0xFF, 0x0A, 0xED, 0xA0, 0x80, 0xC3, 0xA9, 0x1B, 0xC3]
        #expect(PrintableText.escaping(bytes: input) == "a\\xFF\\n\\xED\\xA0\\x80é\\u{1B}\\xC3")
    }

    @Test("an input error's detail is one printable line, whatever input it quotes")
    func inputErrorDetail() {
        let hostile = "x\nforged.ndjson:7: fake\u{1B}]0;pwned\u{07}"
        let errors: [InputError] = [
            caught { () throws(InputError) in _ = try Topic(validating: hostile) },
            caught { () throws(InputError) in _ = try PushType(parsing: hostile) },
            caught { () throws(InputError) in _ = try Priority(parsing: hostile) },
            caught { () throws(InputError) in _ = try Expiration(parsing: hostile) },
            caught { () throws(InputError) in _ = try APNSID(parsing: hostile) },
            caught { () throws(InputError) in _ = try CollapseID(validating: hostile) },
            InputError(.recordFieldInvalid, "field '\(hostile)' appears more than once"),
        ]
        for error in errors {
            #expect(!Self.hasRawControl(error.detail), "\(error.code): \(error.detail)")
            #expect(!Self.hasRawControl(error.description))
        }
    }

    private func caught(_ body: () throws(InputError) -> Void) -> InputError {
        do {
            try body()
            return InputError(.recordFieldInvalid, "no error")
        } catch {
            return error
        }
    }
}
