/// Hand-written CSV output: a cell is quoted (with `""` for a quote) only when it holds a comma, a quote or a
/// line break, so plain values stay readable.
enum CSVText {
    static func appendCell(_ text: String?, to out: inout [UInt8]) {
        guard let text, !text.isEmpty else { return }
        let needsQuotes = text.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        if needsQuotes {
            appendQuotedCell(Array(text.utf8), to: &out)
        } else {
            out.append(contentsOf: text.utf8)
        }
    }

    static func appendQuotedCell(_ bytes: [UInt8], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }
}
