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

    public var description: String {
        switch self {
        case .rate(let rate): return String(rate)
        case .every(let count): return "every:\(count)"
        case .after(let count): return "after:\(count)"
        }
    }
}
