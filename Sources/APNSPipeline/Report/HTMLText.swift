import APNSCore

/// Text made safe for HTML element content and attribute values: control characters (ESC, BEL, line breaks,
/// bidirectional controls) escaped as on a terminal (`PrintableText`), then the HTML specials as entities.
enum HTMLText {
    static func escaped(_ text: String) -> String {
        let printable = PrintableText.escaping(text)
        var out = ""
        out.reserveCapacity(printable.utf8.count)
        for character in printable {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
