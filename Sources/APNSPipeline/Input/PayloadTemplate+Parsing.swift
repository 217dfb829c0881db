import APNSCore

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
                if !inString { try checkStandsAlone(in: template, openingAt: index, closedBefore: next, parsed: parsed) }
                let variable: Int
                if let known = parsed.names.firstIndex(of: name) {
                    variable = known
                } else {
                    variable = parsed.names.count
                    parsed.names.append(name)
                }
                parsed.placeholders.append(Placeholder(literalEnd: parsed.literal.count, variable: variable, inString: inString))
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
    private static func placeholderName(in template: [UInt8], openingAt start: Int) throws(PipelineError) -> ([UInt8], Int) {
        var close = start + 2
        while close + 1 < template.count,
              !(template[close] == UInt8(ascii: "}") && template[close + 1] == UInt8(ascii: "}")) {
            close += 1
        }
        guard close + 1 < template.count else {
            throw PipelineError(.templateInvalid, "'{{' at \(position(of: start, in: template)) is never closed by '}}'")
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
            throw PipelineError(.templateInvalid, "with its placeholders filled it is a JSON \(value.kind), not an object")
        }
    }
}
