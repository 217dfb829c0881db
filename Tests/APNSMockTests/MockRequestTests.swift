import APNSCore
import APNSHTTP2
import Testing

@testable import APNSMock

/// The request the validator reads: a view over the session's field list, and what it sees of it.
@Suite("Mock request")
struct MockRequestTests {
    typealias Support = MockTestSupport

    @Test(
        "a request from parts shows its pseudo-header fields and headers; setting the headers keeps the pseudo-header fields"
    )
    func views() {
        var request = MockRequest(
            streamID: 5, method: "POST", path: "/3/device/ab",
            headers: [("apns-topic", "t"), ("x-repeat", "1"), ("x-repeat", "2")]
        )
        #expect(Array(request.method) == Array("POST".utf8))
        #expect(Array(request.path) == Array("/3/device/ab".utf8))
        #expect(Array(request.authority) == Array("api.sandbox.push.apple.com".utf8))
        #expect(Array(request.scheme) == Array("https".utf8))
        #expect(request.headers == [.init("apns-topic", "t"), .init("x-repeat", "1"), .init("x-repeat", "2")])
        request.headers.append(MockRequest.Header(name: Array("apns-collapse-id".utf8), value: [0xFF]))
        #expect(request.headers.count == 4 && request.headers.last?.value == [0xFF])
        #expect(Array(request.path) == Array("/3/device/ab".utf8) && Array(request.method) == Array("POST".utf8))
        #expect(request.fields.count == 8)
        let bare = MockRequest(streamID: 1, method: [], path: [], authority: [], scheme: [], headers: [], body: [])
        #expect(bare.fields.isEmpty && bare.method.isEmpty && bare.path.isEmpty)
    }

    @Test("the scan finds every field the validator reads, wherever it is, and flags repeated APNs headers")
    func scan() {
        let request = MockRequest(
            path: "/3/device/ab",
            headers: [
                ("user-agent", "x"), ("apns-priority", "5"), ("authorization", "bearer j"), ("apns-expiration", "0"),
                ("apns-topic", "t"), ("apns-id", "i"), ("apns-push-type", "alert"), ("apns-collapse-id", "c"),
            ])
        let fields = RequestHeaderFields(scanning: request.fields)
        let list = request.fields
        for (index, name) in [
            (fields.method, ":method"), (fields.path, ":path"), (fields.authorization, "authorization"),
            (fields.apnsID, "apns-id"), (fields.pushType, "apns-push-type"), (fields.priority, "apns-priority"),
            (fields.expiration, "apns-expiration"), (fields.topic, "apns-topic"),
            (fields.collapseID, "apns-collapse-id"),
        ] {
            guard let index else {
                Issue.record("\(name) not found")
                continue
            }
            #expect(String(decoding: list.name(at: index), as: UTF8.self) == name)
        }
        #expect(!fields.hasDuplicates)
        for repeated in ["apns-topic", "authorization", "apns-future-header"] {
            let twice = MockRequest(path: "/3/device/ab", headers: [(repeated, "1"), ("x", "y"), (repeated, "1")])
            #expect(RequestHeaderFields(scanning: twice.fields).hasDuplicates, "\(repeated)")
        }
        let other = MockRequest(path: "/3/device/ab", headers: [("x-mine", "1"), ("x-mine", "2")])
        #expect(!RequestHeaderFields(scanning: other.fields).hasDuplicates)
    }
}
