/// One request as an `HTTP2ServerSession` received it: every header field raw and in arrival order (pseudo-header
/// fields included, duplicates kept, so a mock can answer DuplicateHeaders), and the body. Owns its bytes.
public struct HTTP2ServerRequest: Sendable {
    /// The stream the request came on (answer it with `HTTP2ServerSession.respond(to:…)`).
    public let streamID: Int32
    /// All header fields as received, in order.
    public let fields: HTTP2HeaderFieldList
    /// The body (at most `maximumRequestBodyBytes` of it).
    public let body: [UInt8]
    /// The body's full length as received, which may exceed `body.count`.
    public let bodyByteCount: Int

    public init(streamID: Int32, fields: HTTP2HeaderFieldList, body: [UInt8], bodyByteCount: Int) {
        self.streamID = streamID
        self.fields = fields
        self.body = body
        self.bodyByteCount = bodyByteCount
    }

    /// `:method`
    public var method: ArraySlice<UInt8>? { fields.firstValue(of: ":method") }
    /// `:path`
    public var path: ArraySlice<UInt8>? { fields.firstValue(of: ":path") }
    /// `:authority`
    public var authority: ArraySlice<UInt8>? { fields.firstValue(of: ":authority") }
    /// `:scheme`
    public var scheme: ArraySlice<UInt8>? { fields.firstValue(of: ":scheme") }

    /// The regular (non-pseudo) header fields, in arrival order, duplicates included.
    public var headers: [(name: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] {
        (0..<fields.count).filter { !fields.isPseudo(at: $0) }.map { (fields.name(at: $0), fields.value(at: $0)) }
    }

    /// Calls `body` with each regular header field, in arrival order, without allocating.
    public func forEachHeader(_ body: (_ name: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>) -> Void) {
        for index in 0..<fields.count where !fields.isPseudo(at: index) {
            body(fields.name(at: index), fields.value(at: index))
        }
    }
}
