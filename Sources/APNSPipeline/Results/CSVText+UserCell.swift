import APNSCore

extension CSVText {
    /// Appends a cell whose value came from the user (a topic, a path, a kept field), made safe for a spreadsheet
    /// and a terminal: control characters escaped as `PrintableText` escapes them, and a value a spreadsheet would
    /// run as a formula (one that starts with `=`, `+`, `-`, `@`, a tab or a carriage return) prefixed with `'` and
    /// quoted, as OWASP's advice on CSV injection says.
    static func appendUserCell(_ text: String, to out: inout [UInt8]) {
        guard let first = text.utf8.first else { return }
        let escaped = PrintableText.escaping(text)
        if formulaStarts.contains(first) {
            appendQuotedCell(Array(("'" + escaped).utf8), to: &out)
        } else {
            appendCell(escaped, to: &out)
        }
    }

    /// The first bytes that make a spreadsheet read a cell as a formula.
    static let formulaStarts: Set<UInt8> = [
        UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D,
    ]
}
