import APNSCore
import Testing

@testable import APNSMock

/// Every request-level rule, each with an accepted and a rejected case, over a certificate connection.
@Suite("Validator: request rules")
struct MockValidatorRequestTests {
    typealias Support = MockTestSupport

    private func answer(_ request: MockRequest, configuration: MockConfiguration = MockConfiguration()) throws
        -> MockDecision
    {
        var (validator, connection) = try Support.certificateSetup(configuration)
        return validator.handle(request, connection: &connection)
    }

    private func headers(replacing name: String, with value: String?, adding extra: [(String, String)] = []) -> [(
        String, String
    )] {
        var headers = Support.request().headers.map {
            (String(decoding: $0.name, as: UTF8.self), String(decoding: $0.value, as: UTF8.self))
        }
        headers.removeAll { $0.0 == name }
        if let value { headers.append((name, value)) }
        return headers + extra
    }

    @Test("a complete valid request is answered 200 with an empty body")
    func accepted() throws {
        let decision = try answer(Support.request())
        #expect(Support.outcome(decision) == "200")
        #expect(decision.response?.body == [])
        #expect(decision.response?.statusDigits == Array("200".utf8))
    }

    @Test(
        "method must be POST",
        arguments: [
            ("POST", "200"), ("GET", "405 MethodNotAllowed"), ("PUT", "405 MethodNotAllowed"),
            ("post", "405 MethodNotAllowed"),
        ])
    func method(method: String, expected: String) throws {
        let decision = try answer(Support.request(method: method))
        #expect(Support.outcome(decision) == expected)
        if expected != "200" { #expect(Support.body(decision.response) == #"{"reason":"MethodNotAllowed"}"#) }
    }

    @Test(
        "path must be /3/device/<hex token>",
        arguments: [
            ("/3/device/\(String(repeating: "ab", count: 32))", "200"),
            ("/3/device/\(String(repeating: "AB", count: 32))", "200"),
            ("/3/device/\(String(repeating: "ab", count: 100))", "200"),
            ("/3/device/\(String(repeating: "ab", count: 16))", "200"),
            ("/2/device/\(String(repeating: "ab", count: 32))", "404 BadPath"),
            ("/3/device", "404 BadPath"),
            ("/", "404 BadPath"),
            ("/3/device/", "400 MissingDeviceToken"),
            ("/3/device/\(String(repeating: "ab", count: 31))a", "400 BadDeviceToken"),
            ("/3/device/\(String(repeating: "ab", count: 15))", "400 BadDeviceToken"),
            ("/3/device/\(String(repeating: "ab", count: 201))", "400 BadDeviceToken"),
            ("/3/device/\(String(repeating: "zz", count: 32))", "400 BadDeviceToken"),
            (
                "/3/device/\(String(repeating: "ab", count: 16)) \(String(repeating: "ab", count: 16))",
                "400 BadDeviceToken"
            ),
            ("/3/device/<\(String(repeating: "ab", count: 32))>", "400 BadDeviceToken"),
            ("/3/device/\(String(repeating: "ab", count: 32))?x=1", "400 BadDeviceToken"),
        ])
    func path(path: String, expected: String) throws {
        #expect(Support.outcome(try answer(Support.request(path: path))) == expected)
    }

    @Test(
        "an APNs header given twice is DuplicateHeaders; other repeated headers are fine",
        arguments: [
            ("apns-topic", "400 DuplicateHeaders"),
            ("apns-push-type", "400 DuplicateHeaders"),
            ("apns-priority", "400 DuplicateHeaders"),
            ("apns-expiration", "400 DuplicateHeaders"),
            ("apns-collapse-id", "400 DuplicateHeaders"),
            ("apns-id", "400 DuplicateHeaders"),
            ("authorization", "400 DuplicateHeaders"),
            ("apns-something-new", "400 DuplicateHeaders"),
            ("user-agent", "200"),
        ])
    func duplicates(name: String, expected: String) throws {
        let values: [String: String] = [
            "apns-topic": Support.topic, "apns-push-type": "alert", "apns-priority": "10", "apns-expiration": "0",
            "apns-collapse-id": "c", "apns-id": "123e4567-e89b-42d3-a456-426614174000", "authorization": "bearer x",
            "apns-something-new": "1", "user-agent": "test",
        ]
        let value = values[name] ?? ""
        var headers = self.headers(replacing: name, with: value)
        headers.append((name, value))
        #expect(Support.outcome(try answer(Support.request(headers: headers))) == expected)
    }

    @Test("apns-id must be a UUID; a valid one is echoed lowercase, otherwise a fresh one is generated")
    func apnsID() throws {
        let upper = "123E4567-E89B-42D3-A456-426614174000"
        let good = try answer(Support.request(headers: headers(replacing: "apns-id", with: upper)))
        #expect(Support.outcome(good) == "200")
        #expect(good.response?.apnsID.description == upper.lowercased())

        let bad = try answer(Support.request(headers: headers(replacing: "apns-id", with: "not-a-uuid")))
        #expect(Support.outcome(bad) == "400 BadMessageId")
        let generated = try #require(bad.response?.apnsID.description)
        #expect(generated != "not-a-uuid")
        #expect((try? APNSID(parsing: generated))?.description == generated)

        let none = try answer(Support.request())
        let fresh = try #require(none.response?.apnsID.description)
        #expect(fresh.count == 36 && fresh == fresh.lowercased())
    }

    @Test("the request's apns-id is echoed on error answers too")
    func apnsIDOnErrors() throws {
        let id = "123e4567-e89b-42d3-a456-426614174000"
        let decision = try answer(Support.request(method: "GET", headers: headers(replacing: "apns-id", with: id)))
        #expect(Support.outcome(decision) == "405 MethodNotAllowed")
        #expect(decision.response?.apnsID.description == id)
    }

    @Test(
        "apns-push-type must be a known value",
        arguments: [
            ("alert", "200"), ("background", "400 BadPriority"), ("mdm", "200"), ("Alert", "400 InvalidPushType"),
            ("push", "400 InvalidPushType"), ("", "400 InvalidPushType"),
        ])
    func pushType(value: String, expected: String) throws {
        // background with a content-available-only payload at the default priority (10) is BadPriority: it got past the type.
        let body = value == "background" ? Array(#"{"aps":{"content-available":1}}"#.utf8) : Support.payload
        #expect(
            Support.outcome(
                try answer(Support.request(headers: headers(replacing: "apns-push-type", with: value), body: body)))
                == expected)
    }

    @Test(
        "apns-priority must be 10, 5 or 1",
        arguments: [
            ("10", "200"), ("5", "200"), ("1", "200"), ("7", "400 BadPriority"), ("high", "400 BadPriority"),
            ("", "400 BadPriority"),
        ])
    func priority(value: String, expected: String) throws {
        #expect(
            Support.outcome(try answer(Support.request(headers: headers(replacing: "apns-priority", with: value))))
                == expected)
    }

    @Test(
        "apns-expiration must be epoch seconds",
        arguments: [
            ("0", "200"), ("1750000000", "200"), ("-1", "400 BadExpirationDate"), ("tomorrow", "400 BadExpirationDate"),
            ("", "400 BadExpirationDate"), ("1.5", "400 BadExpirationDate"),
        ])
    func expiration(value: String, expected: String) throws {
        #expect(
            Support.outcome(try answer(Support.request(headers: headers(replacing: "apns-expiration", with: value))))
                == expected)
    }

    @Test(
        "apns-collapse-id must be at most 64 bytes",
        arguments: [
            (String(repeating: "c", count: 64), "200"), ("x", "200"),
            (String(repeating: "c", count: 65), "400 BadCollapseId"), ("", "400 BadCollapseId"),
            ("pro mo", "200"), (" promo", "400 BadCollapseId"), ("promo ", "400 BadCollapseId"),
            ("\tpromo", "400 BadCollapseId"),
            ("pro\u{0}mo", "400 BadCollapseId"), ("pro\u{85}mo", "400 BadCollapseId"),
        ])
    func collapseID(value: String, expected: String) throws {
        #expect(
            Support.outcome(try answer(Support.request(headers: headers(replacing: "apns-collapse-id", with: value))))
                == expected)
    }

    @Test("apns-collapse-id bytes that are not UTF-8 (an encoded lone surrogate, a stray byte) are BadCollapseId")
    func collapseIDNotUTF8() throws {
        for value: [UInt8] in [[0x61, 0xED, 0xA0, 0x80], [0x61, 0xFF], [0xC3]] {
            var request = Support.request()
            request.headers.append(MockRequest.Header(name: Array("apns-collapse-id".utf8), value: value))
            #expect(Support.outcome(try answer(request)) == "400 BadCollapseId", "\(value)")
        }
    }

    @Test("checks run in APNs's order: method, path, duplicates, header syntax")
    func order() throws {
        let dup = headers(replacing: "apns-priority", with: "7", adding: [("apns-topic", Support.topic)])
        #expect(
            Support.outcome(try answer(Support.request(method: "GET", path: "/nope", headers: dup)))
                == "405 MethodNotAllowed")
        #expect(Support.outcome(try answer(Support.request(path: "/nope", headers: dup))) == "404 BadPath")
        #expect(
            Support.outcome(try answer(Support.request(path: "/3/device/xyz", headers: dup))) == "400 BadDeviceToken")
        #expect(Support.outcome(try answer(Support.request(headers: dup))) == "400 DuplicateHeaders")
        let badIDAndPriority = headers(replacing: "apns-priority", with: "7", adding: [("apns-id", "x")])
        #expect(Support.outcome(try answer(Support.request(headers: badIDAndPriority))) == "400 BadMessageId")
        // Header syntax before credentials: no certificate and no token, but a bad priority.
        var (validator, _) = try Support.certificateSetup()
        var anonymous = validator.openConnection()
        let decision = validator.handle(
            Support.request(headers: headers(replacing: "apns-priority", with: "7")), connection: &anonymous)
        #expect(Support.outcome(decision) == "400 BadPriority")
        // Credentials before the payload.
        let empty = validator.handle(Support.request(body: []), connection: &anonymous)
        #expect(Support.outcome(empty) == "403 MissingProviderToken")
    }
}
