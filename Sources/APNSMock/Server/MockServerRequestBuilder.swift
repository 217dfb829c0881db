import APNSCore
import APNSHTTP2
import APNSTransport

/// Turns each `HTTP2ServerRequest` of one connection into the `MockRequest` the validator reads, in one reused
/// value. A campaign sends the same fields in the same order on every request (`authorization`, `apns-topic`,
/// `apns-push-type`, `:method`, `:authority`, ...), so a field whose bytes equal the previous request's keeps its
/// array and only the fields that really change (`:path`, `apns-id`) allocate.
struct MockServerRequestBuilder {
    /// The request built last. Borrow it for the validator; the builder reuses its storage for the next one.
    private(set) var request = MockRequest(
        streamID: 0, method: [], path: [], authority: [], scheme: [], headers: [], body: []
    )

    /// Fills `request` from `incoming`.
    mutating func build(from incoming: HTTP2ServerRequest) {
        let fields = incoming.fields
        request.streamID = incoming.streamID
        request.body = incoming.body
        var regular = 0
        var sawMethod = false, sawPath = false, sawAuthority = false, sawScheme = false
        for index in 0..<fields.count {
            let name = fields.name(at: index)
            let value = fields.value(at: index)
            if fields.isPseudo(at: index) {
                switch name.count {
                case 7 where Self.equals(name, ":method") && !sawMethod:
                    Self.update(&request.method, value)
                    sawMethod = true
                case 5 where Self.equals(name, ":path") && !sawPath:
                    Self.update(&request.path, value)
                    sawPath = true
                case 10 where Self.equals(name, ":authority") && !sawAuthority:
                    Self.update(&request.authority, value)
                    sawAuthority = true
                case 7 where Self.equals(name, ":scheme") && !sawScheme:
                    Self.update(&request.scheme, value)
                    sawScheme = true
                default:
                    break
                }
                continue
            }
            if regular < request.headers.count {
                Self.update(&request.headers[regular].name, name)
                Self.update(&request.headers[regular].value, value)
            } else {
                request.headers.append(MockRequest.Header(name: Array(name), value: Array(value)))
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
    @inline(__always)
    private static func update(_ stored: inout [UInt8], _ bytes: ArraySlice<UInt8>) {
        if !same(stored, bytes) { stored = Array(bytes) }
    }

    @inline(__always)
    private static func same(_ stored: [UInt8], _ bytes: ArraySlice<UInt8>) -> Bool {
        ByteComparison.equal(stored.span.bytes, bytes.span.bytes)
    }

    @inline(__always)
    private static func equals(_ bytes: ArraySlice<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        return literal.withUTF8Buffer { expected in
            var index = bytes.startIndex
            for byte in expected {
                if bytes[index] != byte { return false }
                index &+= 1
            }
            return true
        }
    }
}
