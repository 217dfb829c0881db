import APNSCore
import Testing

@testable import APNSHTTP2
@testable import APNSTransport

@Suite("HTTP2 header fields")
struct HTTP2HeaderFieldTests {
    @Test("the field list lays out names, values and decimals, and reuses its storage")
    func fieldList() {
        var list = HTTP2HeaderFieldList()
        list.append(name: ":path", prefix: "/3/device/", value: "ab01".utf8)
        list.append(name: "apns-expiration", decimal: 0)
        list.append(name: "x-negative", decimal: -1_234_567_890_123)
        list.append(name: "apns-collapse-id", value: "", indexable: true)
        #expect(list.count == 4)
        #expect(Array(list.value(at: 0)) == Array("/3/device/ab01".utf8))
        #expect(list.isPseudo(at: 0) && !list.isPseudo(at: 1))
        #expect(Array(list.value(at: 1)) == Array("0".utf8))
        #expect(Array(list.value(at: 2)) == Array("-1234567890123".utf8))
        #expect(list.value(at: 3).isEmpty)
        #expect(list.count(of: "apns-collapse-id") == 1)
        list.removeAll()
        #expect(list.isEmpty)
        list.append(name: "apns-priority", decimal: 10)
        #expect(list.firstValue(of: "apns-priority").map(Array.init) == Array("10".utf8))
        #expect(list.firstValue(of: ":path") == nil)
    }

    @Test("fields are compared in place: names and values against literals and arrays, name prefixes, raw bytes")
    func inPlaceComparisons() {
        var list = HTTP2HeaderFieldList()
        list.append(name: ":method", value: "POST")
        list.append(name: Array("apns-foo".utf8), value: [0x61, 0xFF, 0x00])
        list.append(name: "apns-id", value: "")
        for (index, name, value) in [(0, ":method", "POST"), (2, "apns-id", "")] {
            #expect(list.nameCount(at: index) == name.utf8.count && list.valueCount(at: index) == value.utf8.count)
        }
        #expect(list.isPseudo(at: 0) && !list.isPseudo(at: 1))
        #expect(list.value(at: 0, is: "POST") && !list.value(at: 0, is: "POS") && !list.value(at: 0, is: "POSTS"))
        #expect(!list.value(at: 0, is: "post") && !list.value(at: 1, is: "POST"))
        #expect(list.value(at: 2, is: "") && !list.value(at: 0, is: ""))
        #expect(list.name(at: 1, startsWith: "apns-") && list.name(at: 1, startsWith: "apns-foo"))
        #expect(!list.name(at: 1, startsWith: "apns-foo-") && !list.name(at: 0, startsWith: "apns-"))
        #expect(!list.name(at: 1, startsWith: "apns-fox"))
        #expect(list.name(at: 2, is: "apns-id") && !list.name(at: 1, is: "apns-id"))
        #expect(Array(list.value(at: 1)) == [0x61, 0xFF, 0x00])
        #expect(list.value(at: 1, equals: [0x61, 0xFF, 0x00]) && !list.value(at: 1, equals: [0x61, 0xFF]))
        // Eight bytes a step, then the rest: a difference in either part is seen.
        let long = Array("bearer eyJhbGciOiJFUzI1NiJ9.payload.signature".utf8)
        list.append(name: Array("authorization".utf8), value: long)
        #expect(list.value(at: 3, equals: long))
        for position in [0, 7, 8, 40, long.count - 1] {
            var changed = long
            changed[position] ^= 0x01
            #expect(!list.value(at: 3, equals: changed), "byte \(position)")
        }
    }

    @Test("APNs per-request fields from a notification")
    func apnsFields() throws {
        let notification = PushNotification(
            token: try DeviceToken(parsing: "0123456789abcdef0123456789abcdef"),
            topic: try Topic(validating: "com.example.app.voip"), pushType: .voip, priority: .powerAware,
            expiration: .absolute(try Expiration(epochSeconds: 1_700_000_000)),
            collapseID: try CollapseID(validating: "c1"),
            apnsID: try APNSID(parsing: "123E4567-E89B-12D3-A456-426614174000"), payload: [])
        var list = HTTP2HeaderFieldList()
        list.append(name: "stale", value: "x".utf8)
        list.setAPNSRequestFields(for: notification, topicAndPushTypeInBlock: false)
        let fields = (0..<list.count).map {
            (String(decoding: list.name(at: $0), as: UTF8.self), String(decoding: list.value(at: $0), as: UTF8.self))
        }
        #expect(
            fields.map(\.0) == [
                ":path", "apns-topic", "apns-push-type", "apns-id", "apns-expiration", "apns-priority",
                "apns-collapse-id",
            ])
        #expect(
            fields.map(\.1) == [
                "/3/device/0123456789abcdef0123456789abcdef", "com.example.app.voip", "voip",
                "123e4567-e89b-12d3-a456-426614174000", "1700000000", "5", "c1",
            ])
        list.setAPNSRequestFields(
            for: PushNotification(token: notification.token, topic: notification.topic, pushType: .voip, payload: []),
            topicAndPushTypeInBlock: true)
        #expect(list.count == 1)
        #expect(list.isPseudo(at: 0))
    }

    @Test(
        "refilled for a run of notifications, the fields are always those of the current one (token overwritten in place)"
    )
    func apnsFieldsRefilled() throws {
        func notification(_ token: String, apnsID: String? = nil) throws -> PushNotification {
            PushNotification(
                token: try DeviceToken(parsing: token), topic: try Topic(validating: "com.example.app"),
                pushType: .alert,
                apnsID: try apnsID.map { value throws in try APNSID(parsing: value) }, payload: [])
        }
        func fields(_ list: HTTP2HeaderFieldList) -> [String] {
            (0..<list.count).map {
                String(decoding: list.name(at: $0), as: UTF8.self) + "="
                    + String(decoding: list.value(at: $0), as: UTF8.self)
            }
        }
        let uuid = "123e4567-e89b-12d3-a456-426614174000"
        let run: [(String, String?)] = [
            (String(repeating: "ab", count: 32), nil), (String(repeating: "cd", count: 32), nil),
            (String(repeating: "ef", count: 16), nil), (String(repeating: "01", count: 16), uuid),
            (String(repeating: "23", count: 16), nil), (String(repeating: "45", count: 100), nil),
            (String(repeating: "67", count: 100), nil), (String(repeating: "89", count: 16), nil),
            (String(repeating: "a1", count: 35), nil), (String(repeating: "b2", count: 35), nil),  // not whole words
        ]
        var reused = HTTP2HeaderFieldList()
        for (token, apnsID) in run {
            let current = try notification(token, apnsID: apnsID)
            reused.setAPNSRequestFields(for: current, topicAndPushTypeInBlock: true)
            var fresh = HTTP2HeaderFieldList()
            fresh.setAPNSRequestFields(for: current, topicAndPushTypeInBlock: true)
            #expect(fields(reused) == fields(fresh), "token \(token)")
            #expect(fields(reused).first == ":path=/3/device/" + token)
        }
    }

    @Test("the APNs block carries method, scheme, authority and the shared fields")
    func apnsBlock() throws {
        let block = try HTTP2HeaderBlock.apnsRequests(
            endpoint: try APNSEndpoint(parsing: "https://127.0.0.1:2197"), providerToken: "a.b.c",
            topic: try Topic(validating: "com.example.app"), pushType: .alert)
        #expect(
            block.fields.map(\.name) == [
                ":method", ":scheme", ":authority", "authorization", "apns-topic", "apns-push-type",
            ])
        #expect(
            block.fields.map(\.value) == [
                "POST", "https", "127.0.0.1:2197", "bearer a.b.c", "com.example.app", "alert",
            ])
        let certificateBlock = try HTTP2HeaderBlock.apnsRequests(endpoint: .production, providerToken: nil)
        #expect(certificateBlock.count == 3)
    }
}
