import APNSCore

/// A payload template parsed once into literal bytes and `{{name}}` placeholders, filled per record into a
/// reusable buffer.
///
/// How a value is inserted:
/// - inside a JSON string literal (`"Hi {{name}}!"`): JSON-string-escaped (quotes, backslashes, control
///   characters), with no quotes added;
/// - outside a string (`"badge": {{count}}`): as a JSON value. A CSV cell (plain text) goes in as it stands when
///   it is exactly a JSON number, `true`, `false` or `null`, and otherwise as a quoted, escaped string. An NDJSON
///   `vars` member keeps its JSON type: a string goes in as that string, anything else as its JSON text.
///   To force a string, write the placeholder inside quotes: `"zip": "{{zip}}"`.
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
                    out.append(UInt8(ascii: "\""))
                    JSONText.appendEscaped(bytes, range, to: &out)
                    out.append(UInt8(ascii: "\""))
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
