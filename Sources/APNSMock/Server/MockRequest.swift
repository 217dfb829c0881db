/// One HTTP/2 request as the server session received it: pseudo-headers, the regular headers raw and in order
/// (so duplicates stay visible), the body bytes, and the stream it came on. The glue fills it from nghttp2's
/// header and data callbacks without interpreting anything.
public struct MockRequest: Sendable {
    /// One regular header field as received (HTTP/2 header names arrive lowercase).
    public struct Header: Sendable, Hashable {
        public var name: [UInt8]
        public var value: [UInt8]

        public init(name: [UInt8], value: [UInt8]) {
            self.name = name
            self.value = value
        }

        public init(_ name: String, _ value: String) {
            self.init(name: Array(name.utf8), value: Array(value.utf8))
        }
    }

    /// The HTTP/2 stream id the request arrived on (GOAWAY names the last one processed).
    public var streamID: Int32
    /// `:method`
    public var method: [UInt8]
    /// `:path`
    public var path: [UInt8]
    /// `:authority` (not checked: APNs answers whatever host the client used).
    public var authority: [UInt8]
    /// `:scheme`
    public var scheme: [UInt8]
    /// The regular headers, in arrival order, duplicates included.
    public var headers: [Header]
    /// The request body (DATA frames concatenated).
    public var body: [UInt8]

    public init(
        streamID: Int32,
        method: [UInt8],
        path: [UInt8],
        authority: [UInt8],
        scheme: [UInt8],
        headers: [Header],
        body: [UInt8]
    ) {
        self.streamID = streamID
        self.method = method
        self.path = path
        self.authority = authority
        self.scheme = scheme
        self.headers = headers
        self.body = body
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
}
