import APNSHTTP2

/// One HTTP/2 request as the mock received it: every header field raw and in arrival order (pseudo-header fields
/// included, duplicates kept, so the validator can answer `DuplicateHeaders`), the body, and the stream it came on.
/// The server hands the validator the session's own field list and body (`init(_:)`): nothing is copied between
/// nghttp2's callbacks and the checks. Tests and tools build one from text.
public struct MockRequest: Sendable {
    /// One regular header field as received (HTTP/2 header names arrive lowercase).
    public struct Header: Sendable, Hashable {
        /// The header name, as received.
        public var name: [UInt8]
        /// The header value, as received.
        public var value: [UInt8]

        /// A header field from raw bytes.
        public init(name: [UInt8], value: [UInt8]) {
            self.name = name
            self.value = value
        }

        /// A header field from UTF-8 text.
        public init(_ name: String, _ value: String) {
            self.init(name: Array(name.utf8), value: Array(value.utf8))
        }
    }

    /// The HTTP/2 stream id the request arrived on (GOAWAY names the last one processed).
    public var streamID: Int32
    /// Every header field, pseudo-header fields first, in arrival order.
    public var fields: HTTP2HeaderFieldList
    /// The request body (DATA frames concatenated).
    public var body: [UInt8]

    /// A request as received on `streamID`.
    public init(streamID: Int32, fields: HTTP2HeaderFieldList, body: [UInt8]) {
        self.streamID = streamID
        self.fields = fields
        self.body = body
    }

    /// The request a server session received, sharing its storage.
    public init(_ incoming: HTTP2ServerRequest) {
        self.init(streamID: incoming.streamID, fields: incoming.fields, body: incoming.body)
    }

    /// A request from its parts; an empty pseudo-header value leaves that field out.
    public init(
        streamID: Int32,
        method: [UInt8],
        path: [UInt8],
        authority: [UInt8],
        scheme: [UInt8],
        headers: [Header],
        body: [UInt8]
    ) {
        var fields = HTTP2HeaderFieldList()
        for (name, value) in [(":method", method), (":scheme", scheme), (":authority", authority), (":path", path)]
        where !value.isEmpty {
            fields.append(name: Array(name.utf8), value: value)
        }
        for header in headers { fields.append(name: header.name, value: header.value) }
        self.init(streamID: streamID, fields: fields, body: body)
    }

    /// A request from text, for tests and tools.
    public init(
        streamID: Int32 = 1,
        method: String = "POST",
        path: String,
        authority: String = "api.sandbox.push.apple.com",
        scheme: String = "https",
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) {
        self.init(
            streamID: streamID,
            method: Array(method.utf8),
            path: Array(path.utf8),
            authority: Array(authority.utf8),
            scheme: Array(scheme.utf8),
            headers: headers.map { Header($0.0, $0.1) },
            body: body
        )
    }

    /// `:method` (empty when absent).
    public var method: ArraySlice<UInt8> { fields.firstValue(of: ":method") ?? [] }
    /// `:path` (empty when absent).
    public var path: ArraySlice<UInt8> { fields.firstValue(of: ":path") ?? [] }
    /// `:authority` (empty when absent; not checked: APNs answers whatever host the client used).
    public var authority: ArraySlice<UInt8> { fields.firstValue(of: ":authority") ?? [] }
    /// `:scheme` (empty when absent).
    public var scheme: ArraySlice<UInt8> { fields.firstValue(of: ":scheme") ?? [] }

    /// The regular headers, in arrival order, duplicates included. Setting them keeps the pseudo-header fields.
    public var headers: [Header] {
        get {
            (0..<fields.count).filter { !fields.isPseudo(at: $0) }.map {
                Header(name: Array(fields.name(at: $0)), value: Array(fields.value(at: $0)))
            }
        }
        set {
            var rebuilt = HTTP2HeaderFieldList()
            for index in 0..<fields.count where fields.isPseudo(at: index) {
                rebuilt.append(name: Array(fields.name(at: index)), value: Array(fields.value(at: index)))
            }
            for header in newValue { rebuilt.append(name: header.name, value: header.value) }
            fields = rebuilt
        }
    }
}
