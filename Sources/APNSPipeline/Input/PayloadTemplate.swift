import APNSCore

/// A payload template parsed once into literal bytes and `{{name}}` placeholders, filled per record into a
/// reusable buffer.
///
/// How a value is inserted:
/// - inside a JSON string literal (`"Hi {{name}}!"`): JSON-string-escaped (quotes, backslashes, control
///   characters), with no quotes added;
/// - outside a string (`"badge": {{count}}`): as a JSON value. A CSV cell (plain text) must be exactly a JSON
///   number, `true`, `false` or `null`, and goes in as it stands; an empty cell or any other text is the record's
///   input error (`TemplateValueInvalid`, naming the column), never `""` or a string where the template author
///   wrote a bare value. An NDJSON `vars` member keeps its JSON type: a string goes in as that string, anything
///   else as its JSON text. For text, write the placeholder inside quotes: `"zip": "{{zip}}"`.
///
/// `{{` always begins a placeholder; the name is what stands before the next `}}`, trimmed of spaces (any text
/// without braces, quotes, backslashes or control characters: CSV headers like `first name` work). White space
/// outside string literals is removed from the template when it is loaded, so a pretty-printed template file
/// costs no payload bytes. Loading fails unless the template, with every placeholder filled, is a JSON object.
public struct PayloadTemplate: Sendable {
    /// One placeholder: the literal bytes before it end at `literalEnd`; then variable `variable` goes in.
    struct Placeholder: Sendable {
        let literalEnd: Int
        let variable: Int
        let inString: Bool
    }

    /// How one variable's value is given to `render`: a range in the bytes passed with it.
    enum Value {
        case missing
        /// Plain text (a CSV cell), valid UTF-8.
        case text(Range<Int>)
        /// The raw content of a JSON string (between its quotes, escapes as written).
        case jsonString(Range<Int>)
        /// The raw text of a JSON number, literal, object or array.
        case json(Range<Int>)
    }

    /// The largest template file accepted.
    public static let maximumBytes = 64 * 1024

    /// The variable names, in order of first use.
    public let variableNames: [String]
    let variableNameBytes: [[UInt8]]
    let literal: [UInt8]
    let placeholders: [Placeholder]

    /// Parses and checks a template.
    public init(bytes: [UInt8]) throws(PipelineError) {
        let parsed = try Self.parse(bytes)
        literal = parsed.literal
        placeholders = parsed.placeholders
        variableNameBytes = parsed.names
        variableNames = parsed.names.map { String(decoding: $0, as: UTF8.self) }
        try checkRendersToObject()
    }

    /// Reads and parses a template file (gzip and `-` work as for inputs).
    public init(contentsOfFile path: String) throws(PipelineError) {
        let source = try FileByteSource(path: path)
        var bytes = [UInt8](repeating: 0, count: Self.maximumBytes + 1)
        var count = 0
        while count < bytes.count {
            let n = try source.read(into: &bytes, at: count, count: bytes.count - count)
            if n == 0 { break }
            count += n
        }
        guard count <= Self.maximumBytes else {
            throw PipelineError(.templateInvalid, "\(path): larger than \(Self.maximumBytes) bytes")
        }
        bytes.removeLast(bytes.count - count)
        do {
            try self.init(bytes: bytes)
        } catch {
            throw PipelineError(error.kind, "\(path): \(error.detail)")
        }
    }

    /// The index of a variable name, if the template uses it.
    func variableIndex(of name: some Collection<UInt8>) -> Int? {
        variableNameBytes.firstIndex { $0.elementsEqual(name) }
    }

    /// Fills the template into `out` (cleared first). `values[i]` is variable i's value, a range in `bytes`.
    func render(into out: inout [UInt8], values: [Value], in bytes: [UInt8]) throws(InputError) {
        out.removeAll(keepingCapacity: true)
        var literalStart = 0
        for placeholder in placeholders {
            out.append(contentsOf: literal[literalStart..<placeholder.literalEnd])
            literalStart = placeholder.literalEnd
            switch values[placeholder.variable] {
            case .missing:
                throw InputError(
                    .templateVariableMissing,
                    "template variable '\(variableNames[placeholder.variable])' has no value in this record"
                )
            case .text(let range):
                if placeholder.inString {
                    JSONText.appendEscaped(bytes, range, to: &out)
                } else if JSONText.isScalarLiteral(bytes, range) {
                    out.append(contentsOf: bytes[range])
                } else {
                    throw valueError(placeholder.variable, bytes[range])
                }
            case .jsonString(let range):
                if !placeholder.inString { out.append(UInt8(ascii: "\"")) }
                out.append(contentsOf: bytes[range])
                if !placeholder.inString { out.append(UInt8(ascii: "\"")) }
            case .json(let range):
                if placeholder.inString {
                    JSONText.appendEscaped(bytes, range, to: &out)
                } else {
                    out.append(contentsOf: bytes[range])
                }
            }
        }
        out.append(contentsOf: literal[literalStart...])
    }

    /// The error for a CSV cell that cannot stand where variable `variable` stands outside quotes.
    private func valueError(_ variable: Int, _ cell: ArraySlice<UInt8>) -> InputError {
        let name = variableNames[variable]
        let wanted = "a number, true, false or null ({{\(name)}} stands outside quotes in the template)"
        guard !cell.isEmpty else {
            return InputError(
                .templateValueInvalid, "empty value in column '\(name)' where the template needs \(wanted)")
        }
        let text = String(decoding: cell, as: UTF8.self)
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return InputError(
            .templateValueInvalid,
            "value '\(shown)' in column '\(name)' is not \(wanted); for text, write \"{{\(name)}}\" in the template")
    }

    /// Fills the template from text values (as CSV cells are filled); for tools and tests.
    public func render(_ values: [String: String]) throws(InputError) -> [UInt8] {
        var bytes: [UInt8] = []
        var renderedValues: [Value] = []
        for name in variableNames {
            guard let value = values[name] else {
                renderedValues.append(.missing)
                continue
            }
            let start = bytes.count
            bytes.append(contentsOf: value.utf8)
            renderedValues.append(.text(start..<bytes.count))
        }
        var out: [UInt8] = []
        try render(into: &out, values: renderedValues, in: bytes)
        return out
    }
}

// MARK: - Parsing

extension PayloadTemplate {
    /// A template split up: literal bytes, placeholders, variable names.
    struct Parsed {
        var literal: [UInt8] = []
        var placeholders: [Placeholder] = []
        var names: [[UInt8]] = []
    }

    /// Splits the template into literal bytes (white space outside strings dropped) and placeholders.
    static func parse(_ template: [UInt8]) throws(PipelineError) -> Parsed {
        var parsed = Parsed()
        parsed.literal.reserveCapacity(template.count)
        var inString = false
        var index = 0
        while index < template.count {
            let byte = template[index]
            if byte == UInt8(ascii: "{"), index + 1 < template.count, template[index + 1] == UInt8(ascii: "{") {
                let (name, next) = try placeholderName(in: template, openingAt: index)
                if !inString {
                    try checkStandsAlone(in: template, openingAt: index, closedBefore: next, parsed: parsed)
                }
                let variable: Int
                if let known = parsed.names.firstIndex(of: name) {
                    variable = known
                } else {
                    variable = parsed.names.count
                    parsed.names.append(name)
                }
                parsed.placeholders.append(
                    Placeholder(literalEnd: parsed.literal.count, variable: variable, inString: inString))
                index = next
                continue
            }
            if inString {
                parsed.literal.append(byte)
                if byte == UInt8(ascii: "\\"), index + 1 < template.count {
                    parsed.literal.append(template[index + 1])
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { inString = false }
            } else if !JSONText.isSpace(byte) {
                parsed.literal.append(byte)
                if byte == UInt8(ascii: "\"") { inString = true }
            }
            index += 1
        }
        return parsed
    }

    /// A placeholder outside a string becomes a whole JSON value, so it must stand where a value can: after `:`,
    /// `,` or `[`, and before `,`, `]` or `}` (white space aside). `"c":[6{{z}}]` or `{{a}}{{b}}` would load and
    /// then render broken JSON for some values, so they are refused when the template is loaded.
    private static func checkStandsAlone(
        in template: [UInt8], openingAt start: Int, closedBefore end: Int, parsed: Parsed
    ) throws(PipelineError) {
        let follows = parsed.placeholders.last.map { $0.literalEnd == parsed.literal.count && !$0.inString } ?? false
        let before = parsed.literal.last
        let after = template[end...].first { !JSONText.isSpace($0) }
        let opens: [UInt8] = [UInt8(ascii: ":"), UInt8(ascii: ","), UInt8(ascii: "[")]
        let closes: [UInt8] = [UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}")]
        guard !follows, let before, opens.contains(before), let after, closes.contains(after) else {
            let shown = String(decoding: template[start..<end], as: UTF8.self)
            throw PipelineError(
                .templateInvalid,
                "placeholder \(shown) at \(position(of: start, in: template)) stands outside a string, so it must be a whole JSON value: after ':', ',' or '[' and before ',', ']' or '}'"
            )
        }
    }

    /// The trimmed name of the placeholder whose `{{` is at `start`, and the index after its `}}`.
    private static func placeholderName(in template: [UInt8], openingAt start: Int) throws(PipelineError) -> (
        [UInt8], Int
    ) {
        var close = start + 2
        while close + 1 < template.count,
            !(template[close] == UInt8(ascii: "}") && template[close + 1] == UInt8(ascii: "}"))
        {
            close += 1
        }
        guard close + 1 < template.count else {
            throw PipelineError(
                .templateInvalid, "'{{' at \(position(of: start, in: template)) is never closed by '}}'")
        }
        var lower = start + 2
        var upper = close
        while lower < upper, template[lower] == UInt8(ascii: " ") { lower += 1 }
        while upper > lower, template[upper - 1] == UInt8(ascii: " ") { upper -= 1 }
        let name = Array(template[lower..<upper])
        let forbidden: Set<UInt8> = [UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "\""), UInt8(ascii: "\\")]
        guard !name.isEmpty,
            !name.contains(where: { $0 < 0x20 || $0 == 0x7F || forbidden.contains($0) }),
            UTF8Validation.firstInvalidByte(name, in: 0..<name.count) == nil
        else {
            let shown = String(decoding: template[start..<(close + 2)], as: UTF8.self)
            throw PipelineError(
                .templateInvalid,
                "placeholder \(shown) at \(position(of: start, in: template)) needs a name without braces, quotes, backslashes or control characters"
            )
        }
        return (name, close + 2)
    }

    /// "line L column C" of a byte offset.
    static func position(of offset: Int, in bytes: [UInt8]) -> String {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        return "line \(line) column \(offset - lineStart + 1)"
    }

    /// Renders with `0` for every variable (valid both inside a string and as a value) and checks that the
    /// result is a JSON object.
    func checkRendersToObject() throws(PipelineError) {
        let dummy: [UInt8] = [UInt8(ascii: "0")]
        let values = [Value](repeating: .json(0..<1), count: variableNames.count)
        var rendered: [UInt8] = []
        do {
            try render(into: &rendered, values: values, in: dummy)
        } catch {
            throw PipelineError(.templateInvalid, error.detail)
        }
        let value: JSONScanner.Value
        do {
            value = try JSONScanner(rendered).scanDocument(in: 0..<rendered.count)
        } catch {
            throw PipelineError(.templateInvalid, "with its placeholders filled it is not valid JSON: \(error.message)")
        }
        guard value.kind == .object else {
            throw PipelineError(
                .templateInvalid, "with its placeholders filled it is a JSON \(value.kind), not an object")
        }
    }
}
