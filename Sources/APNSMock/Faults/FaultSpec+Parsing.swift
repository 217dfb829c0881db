/// Parsing of the fault-spec grammar documented on `FaultSpec`.
extension FaultSpec {
    /// Parses one spec such as `429=0.05`, `500=every:100`, `goaway=after:500`, `latency=2..20ms`.
    public init(parsing text: some StringProtocol) throws(MockConfigurationError) {
        let spec = Self.trimmed(Substring(text))
        guard let equals = spec.firstIndex(of: "=") else {
            throw .faultSpec(spec, "expected NAME=VALUE, for example 429=0.05")
        }
        let name = Self.trimmed(spec[..<equals]).lowercased()
        let value = Self.trimmed(spec[spec.index(after: equals)...])
        guard !value.isEmpty else { throw .faultSpec(spec, "missing a value after '='") }

        if let answer = FaultAnswer(rawValue: name) {
            let trigger = try Self.trigger(value, spec: spec, allowsAfter: false)
            self = .answer(answer, trigger)
            return
        }
        switch name {
        case "goaway": self = .goaway(try Self.trigger(value, spec: spec, allowsAfter: true))
        case "drop": self = .drop(try Self.trigger(value, spec: spec, allowsAfter: true))
        case "latency": self = .latency(try Self.latency(value, spec: spec))
        case "lower-streams": self = try Self.lowerStreams(value, spec: spec)
        default:
            throw .faultSpec(spec, "unknown fault '\(name)' (known: 429, 500, 503, expired-token, goaway, drop, latency, lower-streams)")
        }
    }

    private static func trigger(_ value: Substring, spec: Substring, allowsAfter: Bool) throws(MockConfigurationError) -> FaultTrigger {
        if value.hasPrefix("every:") {
            return .every(try count(value.dropFirst("every:".count), what: "every", spec: spec))
        }
        if value.hasPrefix("after:") {
            guard allowsAfter else {
                throw .faultSpec(spec, "after:N applies only to goaway and drop; use a rate or every:N")
            }
            return .after(try count(value.dropFirst("after:".count), what: "after", spec: spec))
        }
        guard value.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let rate = Double(value) else {
            let forms = allowsAfter ? "a rate from 0 to 1, every:N or after:N" : "a rate from 0 to 1 or every:N"
            throw .faultSpec(spec, "'\(value)' is not \(forms)")
        }
        guard rate >= 0, rate <= 1 else { throw .faultSpec(spec, "rate \(value) is not between 0 and 1") }
        return .rate(rate)
    }

    private static func count(_ text: Substring, what: String, spec: Substring) throws(MockConfigurationError) -> Int {
        guard let number = decimal(text), number >= 1 else {
            throw .faultSpec(spec, "\(what): needs a whole number of at least 1, not '\(text)'")
        }
        return number
    }

    private static func latency(_ value: Substring, spec: Substring) throws(MockConfigurationError) -> ClosedRange<Int> {
        guard value.hasSuffix("ms") else { throw .faultSpec(spec, "latency needs milliseconds, for example 5ms or 2..20ms") }
        let numbers = value.dropLast(2)
        let bounds: (Int?, Int?)
        let parts = numbers.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        if parts.count == 3, parts[1].isEmpty {
            bounds = (decimal(parts[0]), decimal(parts[2]))
        } else {
            let single = decimal(numbers)
            bounds = (single, single)
        }
        guard let low = bounds.0, let high = bounds.1 else {
            throw .faultSpec(spec, "latency needs whole milliseconds, for example 5ms or 2..20ms")
        }
        guard low <= high else { throw .faultSpec(spec, "latency range \(low)..\(high) is reversed") }
        guard high <= maximumLatencyMilliseconds else {
            throw .faultSpec(spec, "latency above \(maximumLatencyMilliseconds)ms is not supported")
        }
        return low...high
    }

    private static func lowerStreams(_ value: Substring, spec: Substring) throws(MockConfigurationError) -> FaultSpec {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "after", parts[2] == "to" else {
            throw .faultSpec(spec, "lower-streams needs after:N:to:M, for example after:100:to:10")
        }
        let after = try count(parts[1], what: "after", spec: spec)
        let limit = try count(parts[3], what: "to", spec: spec)
        return .lowerStreams(after: after, to: limit)
    }

    /// A non-negative decimal integer of at most 9 digits (no sign, no spaces).
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
