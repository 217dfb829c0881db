import APNSCore

/// One fault the mock injects, parsed from a command-line spec.
///
/// Grammar (one spec; `FaultPlan` takes several, separated by commas or given one per option):
///
///     spec     = status "=" answer-trigger
///              | "expired-token" "=" answer-trigger
///              | ("goaway" | "drop") "=" conn-trigger
///              | "latency" "=" millis "ms"  |  "latency" "=" millis ".." millis "ms"
///              | "lower-streams" "=" "after:" count ":to:" count
///     status   = "429" | "500" | "503"
///     answer-trigger = rate | "every:" count
///     conn-trigger   = rate | "every:" count | "after:" count
///     rate     = a decimal number from 0 to 1 (`0.05`, `1`, `0`)
///     count    = a decimal integer of at least 1;  millis = a decimal integer from 0 to 60000
///
/// Meanings:
/// - `429=…` / `500=…` / `503=…` answer `TooManyRequests` / `InternalServerError` / `ServiceUnavailable` instead
///   of a 200; `expired-token=…` answers 403 `ExpiredProviderToken` instead of a 200 to a token-authenticated
///   request (and lets that connection change its token at once). These faults only ever replace an answer that
///   would have been 200: `rate` is the share of would-be-200 answers replaced, `every:N` replaces every Nth
///   would-be-200 answer, counted across the whole server.
/// - `goaway=after:N` sends GOAWAY (NO_ERROR, debug data `{"reason":"Shutdown"}`, last-stream-id = the highest
///   stream answered) right after a connection's Nth answer; `goaway=0.01` / `goaway=every:N` do so after answers drawn
///   by rate or counted across the server.
/// - `drop=after:N` closes a connection abruptly (no GOAWAY, no answer) when a request arrives after N answers;
///   `drop=0.001` / `drop=every:N` drop the connection on requests drawn by rate or counted across the server.
/// - `latency=5ms` holds every answer back 5 ms; `latency=2..20ms` draws each delay uniformly from 2…20 ms.
/// - `lower-streams=after:N:to:M` lowers a connection's SETTINGS_MAX_CONCURRENT_STREAMS to M after its Nth answer.
public enum FaultSpec: Hashable, Sendable, CustomStringConvertible {
    /// Replace would-be-200 answers with an error answer.
    case answer(FaultAnswer, FaultTrigger)
    /// Send GOAWAY `Shutdown` after an answer.
    case goaway(FaultTrigger)
    /// Drop the connection abruptly instead of answering.
    case drop(FaultTrigger)
    /// Delay every answer by a number of milliseconds drawn uniformly from the range.
    case latency(ClosedRange<Int>)
    /// Lower the stream limit once per connection, after its Nth answer.
    case lowerStreams(after: Int, to: Int)

    /// The largest latency accepted, in milliseconds.
    public static let maximumLatencyMilliseconds = 60_000

    /// The spec's name, as written before the `=`.
    public var name: String {
        switch self {
        case .answer(let answer, _): return answer.specName
        case .goaway: return "goaway"
        case .drop: return "drop"
        case .latency: return "latency"
        case .lowerStreams: return "lower-streams"
        }
    }

    /// The fault as written on the command line.
    public var description: String {
        switch self {
        case .answer(_, let trigger), .goaway(let trigger), .drop(let trigger): return "\(name)=\(trigger)"
        case .latency(let range):
            return range.lowerBound == range.upperBound
                ? "latency=\(range.lowerBound)ms" : "latency=\(range.lowerBound)..\(range.upperBound)ms"
        case .lowerStreams(let after, let limit): return "lower-streams=after:\(after):to:\(limit)"
        }
    }
}

/// The error answers a fault can put in place of a 200.
public enum FaultAnswer: String, Hashable, Sendable, CaseIterable {
    case expiredProviderToken = "expired-token"
    case tooManyRequests = "429"
    case internalServerError = "500"
    case serviceUnavailable = "503"

    /// The name used in a spec.
    public var specName: String { rawValue }

    /// The APNs reason the answer carries (its status is `reason.status`).
    public var reason: APNSReason {
        switch self {
        case .expiredProviderToken: return .expiredProviderToken
        case .tooManyRequests: return .tooManyRequests
        case .internalServerError: return .internalServerError
        case .serviceUnavailable: return .serviceUnavailable
        }
    }
}

/// When a fault fires: with a probability, on every Nth eligible request server-wide, or once per connection
/// after its Nth answer.
public enum FaultTrigger: Hashable, Sendable, CustomStringConvertible {
    case rate(Double)
    case every(Int)
    case after(Int)

    /// The fault as written on the command line.
    public var description: String {
        switch self {
        case .rate(let rate): return String(rate)
        case .every(let count): return "every:\(count)"
        case .after(let count): return "after:\(count)"
        }
    }
}

// MARK: - Parsing

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
            throw .faultSpec(
                spec,
                "unknown fault '\(name)' (known: 429, 500, 503, expired-token, goaway, drop, latency, lower-streams)")
        }
    }

    private static func trigger(_ value: Substring, spec: Substring, allowsAfter: Bool) throws(MockConfigurationError)
        -> FaultTrigger
    {
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

    private static func latency(_ value: Substring, spec: Substring) throws(MockConfigurationError) -> ClosedRange<Int>
    {
        guard value.hasSuffix("ms") else {
            throw .faultSpec(spec, "latency needs milliseconds, for example 5ms or 2..20ms")
        }
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

// MARK: - FaultPlan

/// The set of faults one mock run injects: at most one spec per fault name, in the grammar documented on `FaultSpec`.
public struct FaultPlan: Hashable, Sendable, CustomStringConvertible {
    /// The specs, in the order given.
    public let specs: [FaultSpec]

    /// No faults.
    public static let none = FaultPlan(uncheckedSpecs: [])

    /// A plan from parsed specs; rejects two specs with the same name.
    public init(_ specs: [FaultSpec]) throws(MockConfigurationError) {
        var seen: Set<String> = []
        for spec in specs where !seen.insert(spec.name).inserted {
            throw .faultSpec(spec.description, "'\(spec.name)' is given more than once")
        }
        self.specs = specs
    }

    /// Parses specs as given on the command line: each argument may hold several specs separated by commas
    /// (`--fault 429=0.05,500=every:100 --fault latency=2..20ms`). Empty arguments and empty items are ignored.
    public init(parsing arguments: [String]) throws(MockConfigurationError) {
        var specs: [FaultSpec] = []
        for argument in arguments {
            for item in argument.split(separator: ",") where !item.allSatisfy({ $0 == " " || $0 == "\t" }) {
                specs.append(try FaultSpec(parsing: item))
            }
        }
        try self.init(specs)
    }

    private init(uncheckedSpecs: [FaultSpec]) {
        specs = uncheckedSpecs
    }

    /// Whether no fault is configured.
    public var isEmpty: Bool { specs.isEmpty }

    /// The faults as written on the command line, or "none".
    public var description: String { specs.isEmpty ? "none" : specs.map(\.description).joined(separator: ",") }
}
