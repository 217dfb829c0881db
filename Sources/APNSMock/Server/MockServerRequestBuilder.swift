import APNSCore
import APNSHTTP2
import APNSTransport

/// Turns each `HTTP2ServerRequest` of one connection into the `MockRequest` the validator reads, in one reused
/// value. A campaign sends the same fields in the same order on every request (`authorization`, `apns-topic`,
/// `apns-push-type`, `:method`, `:authority`, ...), so a field whose bytes equal the previous request's is left as
/// it is, and one that really changes (`:path`, `apns-id`) is copied into the storage it had: nothing allocates.
struct MockServerRequestBuilder {
    /// The request built last. Borrow it for the validator; the builder reuses its storage for the next one.
    private(set) var request = MockRequest(
        streamID: 0, method: [], path: [], authority: [], scheme: [], headers: [], body: []
    )

    /// Fills `request` from `incoming`.
    mutating func build(from incoming: HTTP2ServerRequest) {
        let fields = incoming.fields
        request.streamID = incoming.streamID
        // Copied into the builder's own body (no allocation once it has grown), so the request's storage is not
        // shared when the session takes it back for a later request.
        request.body.removeAll(keepingCapacity: true)
        request.body.append(contentsOf: incoming.body)
        var regular = 0
        var sawMethod = false, sawPath = false, sawAuthority = false, sawScheme = false
        for index in 0..<fields.count {
            if fields.isPseudo(at: index) {
                switch fields.nameCount(at: index) {
                case 7 where !sawMethod && fields.name(at: index, is: ":method"):
                    Self.update(&request.method, toValueAt: index, of: fields)
                    sawMethod = true
                case 5 where !sawPath && fields.name(at: index, is: ":path"):
                    Self.update(&request.path, toValueAt: index, of: fields)
                    sawPath = true
                case 10 where !sawAuthority && fields.name(at: index, is: ":authority"):
                    Self.update(&request.authority, toValueAt: index, of: fields)
                    sawAuthority = true
                case 7 where !sawScheme && fields.name(at: index, is: ":scheme"):
                    Self.update(&request.scheme, toValueAt: index, of: fields)
                    sawScheme = true
                default:
                    break
                }
                continue
            }
            if regular < request.headers.count {
                if !fields.name(at: index, equals: request.headers[regular].name) {
                    fields.copyName(at: index, into: &request.headers[regular].name)
                }
                Self.update(&request.headers[regular].value, toValueAt: index, of: fields)
            } else {
                request.headers.append(MockRequest.Header(name: Array(fields.name(at: index)), value: Array(fields.value(at: index))))
            }
            regular += 1
        }
        if request.headers.count > regular { request.headers.removeLast(request.headers.count - regular) }
        if !sawMethod { request.method.removeAll() }
        if !sawPath { request.path.removeAll() }
        if !sawAuthority { request.authority.removeAll() }
        if !sawScheme { request.scheme.removeAll() }
    }

    /// Drops the body and header values so a finished connection does not keep them alive.
    mutating func reset() {
        request = MockRequest(streamID: 0, method: [], path: [], authority: [], scheme: [], headers: [], body: [])
    }

    /// Replaces `stored` with `bytes` unless it already holds exactly those bytes.
    /// Refreshes `stored` from field `index`'s value when they differ (mostly they do not: a client sends the
    /// same authority, scheme, method and most headers on every request).
    @inline(__always)
    private static func update(_ stored: inout [UInt8], toValueAt index: Int, of fields: HTTP2HeaderFieldList) {
        if !fields.value(at: index, equals: stored) { fields.copyValue(at: index, into: &stored) }
    }
}
