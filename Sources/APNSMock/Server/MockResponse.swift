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
    public static func rejected(_ reason: APNSReason, apnsID: APNSID, timestampMilliseconds: Int64? = nil) -> MockResponse {
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
