/// The rule every header value the tool sends must meet: RFC 9113 §8.2.1 plus a stricter line on control
/// characters (docs/FILES.md, "Header values"). A value that breaks it never reaches the wire: a strict HTTP/2 peer
/// answers it with a stream or connection error, which would put other requests in doubt.
///
/// RFC 9113 §8.2.1: a field value must not contain NUL, CR or LF, and must not start or end with SP or HTAB.
/// Stricter here: no other C0 control, no DEL and no C1 control (U+0080 to U+009F) either; none belongs in an
/// identifier, and they are what a terminal acts on when the value is printed. Bytes must be valid UTF-8 (which
/// also rules out encoded lone surrogates).
public enum HeaderFieldValue {
    /// Why `text` cannot be sent as a header value, or nil if it can ("starts with a blank", …).
    public static func problem(in text: String) -> String? {
        guard let first = text.utf8.first, let last = text.utf8.last else { return nil }
        if first == 0x20 || first == 0x09 { return "starts with a blank" }
        if last == 0x20 || last == 0x09 { return "ends with a blank" }
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return nil }
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00, 0x0A, 0x0D: return "contains NUL, CR or LF"
            case 0x01..<0x20, 0x7F...0x9F: return "contains a control character"
            default: continue
            }
        }
        return nil
    }
}
