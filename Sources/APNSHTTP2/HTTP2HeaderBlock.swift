/// Header fields that stay the same for many requests (`:method POST`, `:scheme https`, `:authority`,
/// `authorization`, `apns-topic`, `apns-push-type` for a campaign), validated and laid out once in memory this
/// object owns, so that every request hands nghttp2 pointers to them instead of copying them
/// (`NGHTTP2_NV_FLAG_NO_COPY_NAME/VALUE`).
///
/// Lifetime: nghttp2 keeps those pointers until it has serialized the HEADERS frame. `HTTP2ClientSession` keeps
/// a strong reference to the block in each stream's slot until that stream ends, so a caller may replace its block
/// (a re-signed provider token) at any time and drop the old one. The block is immutable, so one block can serve
/// many connections.
public final class HTTP2HeaderBlock: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init, including the storage's bytes.

    /// The fields, in the order they go on the wire (names lowercased).
    public let fields: [(name: String, value: String)]
    let storage: Nghttp2HeaderBlockStorage

    /// Validates and lays out `fields`. Pseudo-header fields (`:method`…) may come in any position; they are
    /// always sent first. Names are lowercased.
    public init(_ fields: [(name: String, value: String)]) throws(HTTP2Error) {
        let lowered = fields.map { (name: $0.name.lowercased(), value: $0.value) }
        self.storage = try Nghttp2HeaderBlockStorage(lowered)
        self.fields = lowered
    }

    /// A block for requests: `:method`, `:scheme`, `:authority`, then `fields`.
    public convenience init(
        method: String = "POST", scheme: String = "https", authority: String, fields: [(name: String, value: String)] = []
    ) throws(HTTP2Error) {
        try self.init([(":method", method), (":scheme", scheme), (":authority", authority)] + fields)
    }

    /// The number of fields.
    public var count: Int { fields.count }
}
