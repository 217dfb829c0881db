import APNSCore

/// The answer to one request, ready for the wire: `:status`, `apns-id` (always), `apns-unique-id` (development
/// mode, 200 only) and the body (empty for 200, else exactly `{"reason":"X"}`, plus `"timestamp"` for 410).
public struct MockResponse: Sendable, Hashable {
    /// The HTTP status.
    public let status: Int
    /// The rejection reason; nil for 200.
    public let reason: APNSReason?
    /// The request's own `apns-id`, or a fresh one when it had none.
    public let apnsID: APNSID
    /// `apns-unique-id`, sent only in development mode and only with 200.
    public let uniqueID: APNSID?
    /// The body bytes.
    public let body: [UInt8]

    /// A 200 answer.
    public static func accepted(apnsID: APNSID, uniqueID: APNSID?) -> MockResponse {
        MockResponse(status: 200, reason: nil, apnsID: apnsID, uniqueID: uniqueID, body: [])
    }

    /// An error answer with the status APNs pairs with `reason` (500 for a reason without one) and the body
    /// `{"reason":"X"}`, or for a 410 with a timestamp `{"reason":"X","timestamp":T}`.
    public static func rejected(_ reason: APNSReason, apnsID: APNSID, timestampMilliseconds: Int64? = nil)
        -> MockResponse
    {
        let status = reason.status ?? 500
        let body: [UInt8]
        if let timestampMilliseconds {
            body = ResponseBodies.body(reason, timestampMilliseconds: timestampMilliseconds)
        } else {
            body = ResponseBodies.body(reason)
        }
        return MockResponse(status: status, reason: reason, apnsID: apnsID, uniqueID: nil, body: body)
    }

    /// `:status` as ASCII digits, pre-rendered for the common statuses.
    public var statusDigits: [UInt8] { ResponseBodies.statusDigits(status) }
}

/// The constant response bodies and status digits, rendered once.
enum ResponseBodies {
    private static let bodies: [APNSReason: [UInt8]] = Dictionary(
        uniqueKeysWithValues: APNSReason.documented.map { ($0, render($0)) }
    )

    private static let statuses: [Int: [UInt8]] = Dictionary(
        uniqueKeysWithValues: [200, 400, 403, 404, 405, 410, 413, 429, 500, 503].map { ($0, Array(String($0).utf8)) }
    )

    /// `{"reason":"X"}`
    static func body(_ reason: APNSReason) -> [UInt8] {
        bodies[reason] ?? render(reason)
    }

    /// `{"reason":"X","timestamp":T}`
    static func body(_ reason: APNSReason, timestampMilliseconds: Int64) -> [UInt8] {
        var body = Array(#"{"reason":""#.utf8)
        appendEscaped(reason.rawValue, to: &body)
        body.append(contentsOf: #"","timestamp":"#.utf8)
        body.append(contentsOf: String(timestampMilliseconds).utf8)
        body.append(UInt8(ascii: "}"))
        return body
    }

    static func statusDigits(_ status: Int) -> [UInt8] {
        statuses[status] ?? Array(String(status).utf8)
    }

    private static func render(_ reason: APNSReason) -> [UInt8] {
        var body = Array(#"{"reason":""#.utf8)
        appendEscaped(reason.rawValue, to: &body)
        body.append(contentsOf: #""}"#.utf8)
        return body
    }

    /// Appends a JSON string's content; documented reasons are plain ASCII letters, others are escaped.
    static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: Array(#"\u00"#.utf8))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
    }
}

// MARK: - MockDecision

/// What the server does with one request: the answer to send on its stream (nil: send none) and the
/// connection-level actions the glue performs, in order.
public struct MockDecision: Sendable, Hashable {
    /// The answer for the request's stream; nil when the stream is refused or the connection dropped.
    public let response: MockResponse?
    /// Connection-level actions, in the order to perform them (usually none: an empty array does not allocate).
    public let actions: [MockConnectionAction]

    /// A decision: the response to send (nil for none) and the actions to take on the connection.
    public init(response: MockResponse?, actions: [MockConnectionAction] = []) {
        self.response = response
        self.actions = actions
    }
}

/// A connection-level action the network glue must perform for a decision. See each case for exactly what to do.
public enum MockConnectionAction: Sendable, Hashable {
    /// Send SETTINGS with SETTINGS_MAX_CONCURRENT_STREAMS = n now (not waiting for a delayed answer). Emitted once
    /// per connection, on the first request whose provider token (or client certificate) is valid.
    case raiseStreamLimit(Int)
    /// Send SETTINGS with SETTINGS_MAX_CONCURRENT_STREAMS = n now (fault `lower-streams`). Streams already open
    /// stay open and are answered; nghttp2 refuses new ones above the limit once the client has acknowledged it.
    case lowerStreamLimit(Int)
    /// Submit this stream's answer (unless delayed), then send GOAWAY with this last-stream-id (the highest stream
    /// answered so far on the connection, this one included), this error code (0 = NO_ERROR) and these debug-data bytes (`{"reason":"Shutdown"}`). Then keep
    /// answering streams at or below the last-stream-id (a delayed answer included), reset open streams above it
    /// with RST_STREAM REFUSED_STREAM, accept no new ones, and close the connection (TLS close_notify, then the
    /// socket) once every stream at or below it is answered and the output is flushed.
    case goaway(lastStreamID: Int32, errorCode: UInt32, debugData: [UInt8])
    /// Close the socket at once: no answer on this stream, no GOAWAY, no TLS close_notify, drop queued output.
    case dropConnection
    /// Hold this stream's answer back for this many milliseconds (with a timer; keep serving other streams),
    /// then submit it. The actions after this one do not wait.
    case delay(milliseconds: Int)
    /// Reset this stream with RST_STREAM REFUSED_STREAM and send no answer (a request that arrived on a stream
    /// above the last-stream-id of a GOAWAY already sent: the client may resend it safely).
    case refuseStream
}
