import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// The byte-table escaping of result-line strings against a plain reference written from RFC 8259 §7.
@Suite struct JSONTextEscapingTests {
    /// The reference: `"` and `\` get a backslash, the six short escapes, every other control byte `\u00XX`.
    /// Then, as the writer makes every file line printable, each character `PrintableText` escapes (DEL, C1, the
    /// separators and the bidi controls) as `\uXXXX`.
    static func reference(_ text: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for scalar in text.unicodeScalars {
            guard scalar.value < 0x80 else {
                if PrintableText.needsEscaping(scalar) {
                    out += Array(String(format: "\\u%04x", scalar.value).utf8)
                } else {
                    out += Array(String(Character(scalar)).utf8)
                }
                continue
            }
            let byte = UInt8(scalar.value)
            if byte == 0x7F {
                out += Array(#"\u007f"#.utf8)
                continue
            }
            switch byte {
            case 0x22: out += Array(#"\""#.utf8)
            case 0x5C: out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x08: out += Array(#"\b"#.utf8)
            case 0x0C: out += Array(#"\f"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    static func escaped(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONText.appendString(text, to: &out)
        return out
    }

    @Test func everyScalarBelow256AloneAndInsideText() {
        for value in 0...255 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let alone = String(Character(scalar))
            #expect(Self.escaped(alone) == Self.reference(alone), "U+\(value)")
            let inside = "ab\(alone)cd\(alone)"
            #expect(Self.escaped(inside) == Self.reference(inside), "U+\(value) inside text")
        }
    }

    /// The one byte that needs escaping at every place of texts 0 to 24 bytes long (so before, inside and after
    /// the eight-byte words), among non-ASCII text that must pass through untouched.
    @Test func escapesFoundAtEveryPlace() {
        let fillers: [String] = ["a", "é", "€"]
        for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}", "\u{7F}", "\u{85}", "\u{202E}", "\u{2069}"] + [""] {
            for filler in fillers {
                for length in 0..<25 {
                    for place in 0...length {
                        let text =
                            String(repeating: filler, count: place) + special
                            + String(repeating: filler, count: length - place)
                        #expect(Self.escaped(text) == Self.reference(text), "\(Array(text.utf8))")
                    }
                }
            }
        }
    }

    @Test func pinnedLines() {
        #expect(String(decoding: Self.escaped("plain.ndjson"), as: UTF8.self) == #""plain.ndjson""#)
        #expect(String(decoding: Self.escaped("a\"b\\c\n\u{1B}é€😀"), as: UTF8.self) == #""a\"b\\c\n\u001bé€😀""#)
        #expect(Self.escaped("") == Array(#""""#.utf8))
        let long = String(repeating: "reason ", count: 2_000) + "\t"
        #expect(Self.escaped(long) == Self.reference(long))
    }
}
