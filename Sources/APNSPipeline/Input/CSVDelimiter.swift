/// The byte that separates a CSV file's fields: a comma, a semicolon (what spreadsheet programs export where the
/// decimal separator is a comma) or a tab. Given with `--csv-delimiter`, or detected per file from its header row
/// (docs/FILES.md, "CSV and payload templates").
public struct CSVDelimiter: Sendable, Hashable, CustomStringConvertible {
    /// The byte that separates fields.
    public let byte: UInt8

    /// Fields separated by commas.
    public static let comma = CSVDelimiter(byte: UInt8(ascii: ","))
    /// Fields separated by semicolons.
    public static let semicolon = CSVDelimiter(byte: UInt8(ascii: ";"))
    /// Fields separated by tabs.
    public static let tab = CSVDelimiter(byte: UInt8(ascii: "\t"))
    /// The delimiters detection chooses from, in the order ties are broken.
    public static let candidates: [CSVDelimiter] = [.comma, .semicolon, .tab]

    private init(byte: UInt8) {
        self.byte = byte
    }

    /// An option's value: `,`, `;`, `tab`, `\t` (backslash and t) or a tab character; nil for anything else.
    public init?(option text: String) {
        switch text.lowercased() {
        case ",", "comma": self = .comma
        case ";", "semicolon": self = .semicolon
        case "tab", "\\t", "\t": self = .tab
        default: return nil
        }
    }

    /// Its `--csv-delimiter` value: `,`, `;` or `tab`.
    public var optionValue: String {
        self == .tab ? "tab" : String(Character(Unicode.Scalar(byte)))
    }

    /// How messages name it, as `--csv-delimiter` takes it in a shell: `','`, `';'` or `tab`.
    public var description: String {
        self == .tab ? "tab" : "'\(optionValue)'"
    }

    /// The delimiter of a CSV file whose first bytes are `bytes[range]` (a byte-order mark already skipped; the
    /// header row need not be complete if the range ends before it does): of comma, semicolon and tab, the one
    /// that splits the header row into the most fields outside quotes, among those whose fields include
    /// `tokenColumn` (compared as `CSVRecordParser` compares it) if any do; ties go to the earlier candidate.
    /// Each candidate reads the header with the reader's own state machine, so quotes count exactly as they do
    /// when the file is read.
    static func detect(in bytes: [UInt8], range: Range<Int>, tokenColumn: String) -> CSVDelimiter {
        var best = CSVDelimiter.comma
        var bestFields = 0
        var bestHasToken = false
        for candidate in candidates {
            let names = headerFields(of: bytes, range: range, delimiter: candidate)
            let hasToken = CSVRecordParser.tokenColumnIndex(in: names, tokenColumn: tokenColumn) != nil
            if (hasToken && !bestHasToken) || (hasToken == bestHasToken && names.count > bestFields) {
                best = candidate
                bestFields = names.count
                bestHasToken = hasToken
            }
        }
        return best
    }

    /// The fields of the first record of `bytes[range]` read with `delimiter` (empty when there is none).
    static func headerFields(of bytes: [UInt8], range: Range<Int>, delimiter: CSVDelimiter) -> [String] {
        var machine = CSVStateMachine(maximumRecordLength: range.count + 1, delimiter: delimiter.byte)
        machine.beginRecord()
        var record = machine.feed(bytes, from: range.lowerBound, to: range.upperBound).record
        if record == nil { record = machine.finishAtEndOfInput() }
        guard record != nil else { return [] }
        var names: [String] = []
        var start = 0
        for end in machine.fieldEnds {
            names.append(String(decoding: machine.fieldBytes[start..<end], as: UTF8.self))
            start = end
        }
        return names
    }
}
