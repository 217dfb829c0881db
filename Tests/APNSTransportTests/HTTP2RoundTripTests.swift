import Testing

@testable import APNSHTTP2
@testable import APNSTransport

@Suite("HTTP2 sessions: requests and responses")
struct HTTP2RoundTripTests {
    @Test("one request: the server sees the exact request, the client gets status, ids and body")
    func roundTrip() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 1000))
        let block = try APNSLikeTraffic.block()
        var fields = HTTP2HeaderFieldList()
        fields.append(name: ":path", prefix: "/3/device/", value: "0123abcd".utf8)
        fields.append(name: "apns-id", value: "123e4567-e89b-12d3-a456-426614174000".utf8)
        fields.append(name: "apns-expiration", decimal: 1_700_000_000)
        fields.append(name: "apns-priority", decimal: 5)
        fields.append(name: "apns-collapse-id", value: "group-7".utf8)
        let body = Array(#"{"aps":{"alert":"hi"}}"#.utf8)
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            var answer = HTTP2HeaderFieldList()
            answer.append(name: "apns-id", value: request.fields.firstValue(of: "apns-id") ?? [])
            answer.append(name: "apns-unique-id", value: "a8e6f8a0-0000-4000-8000-000000000001".utf8)
            try? pair.server.respond(
                to: request.streamID, status: 400, fields: answer, body: Array(#"{"reason":"BadDeviceToken"}"#.utf8))
        }
        #expect(pair.client.availableStreamSlots == 1)
        let streamID = try pair.client.submitRequest(block: block, fields: fields, body: body, tag: 42)
        #expect(streamID == 1)
        pair.interact()

        let requests = pair.serverRequests
        try #require(requests.count == 1)
        let request = requests[0]
        #expect(APNSLikeTraffic.text(request.method) == "POST")
        #expect(APNSLikeTraffic.text(request.scheme) == "https")
        #expect(APNSLikeTraffic.text(request.authority) == APNSLikeTraffic.authority)
        #expect(APNSLikeTraffic.text(request.path) == "/3/device/0123abcd")
        let headers = request.headers.map {
            (String(decoding: $0.name, as: UTF8.self), String(decoding: $0.value, as: UTF8.self))
        }
        let expected = [
            ("authorization", "bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMzQ1NjcifQ.test.signature"),
            ("apns-topic", "com.example.app"), ("apns-push-type", "alert"),
            ("apns-id", "123e4567-e89b-12d3-a456-426614174000"), ("apns-expiration", "1700000000"),
            ("apns-priority", "5"), ("apns-collapse-id", "group-7"),
        ]
        #expect(headers.map(\.0) == expected.map(\.0))
        #expect(headers.map(\.1) == expected.map(\.1))
        #expect(request.body == body)
        #expect(request.bodyByteCount == body.count)

        #expect(
            pair.clientRecords == [
                .limit(1000),
                .response(
                    tag: 42, streamID: 1, status: 400, apnsID: "123e4567-e89b-12d3-a456-426614174000",
                    apnsUniqueID: "a8e6f8a0-0000-4000-8000-000000000001",
                    body: Array(#"{"reason":"BadDeviceToken"}"#.utf8)),
            ])
        #expect(pair.client.openStreamCount == 0)
        #expect(pair.server.openStreamCount == 0)
        #expect(!pair.client.isClosed && !pair.server.isClosed)
    }

    @Test("recycled requests: every later request on the reused storage holds exactly its own fields and body")
    func recycledRequests() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 1000))
        let block = try APNSLikeTraffic.block()
        var seen: [(path: String, headers: [String], body: [UInt8])] = []
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            let path = String(decoding: request.fields.firstValue(of: ":path") ?? [], as: UTF8.self)
            let headers = (0..<request.fields.count).filter { !request.fields.isPseudo(at: $0) }.map {
                String(decoding: request.fields.name(at: $0), as: UTF8.self) + "="
                    + String(decoding: request.fields.value(at: $0), as: UTF8.self)
            }
            seen.append((path, headers, request.body))
            try? pair.server.respond(to: request.streamID, status: 200, fields: HTTP2HeaderFieldList(), body: [])
            pair.server.recycle(request)
        }
        // Long then short then long again: stale bytes of an earlier, longer request would show.
        let bodies = [String(repeating: "x", count: 900), "{}", String(repeating: "y", count: 300), "", "{\"a\":1}"]
        for (index, body) in bodies.enumerated() {
            var fields = HTTP2HeaderFieldList()
            fields.append(
                name: ":path", prefix: "/3/device/", value: String(repeating: "ab", count: 40 - index * 7).utf8)
            if index % 2 == 0 { fields.append(name: "apns-collapse-id", value: "group-\(index)".utf8) }
            _ = try pair.client.submitRequest(
                block: block, fields: fields, body: Array(body.utf8), tag: UInt64(index + 1))
            pair.interact()
        }
        try #require(seen.count == bodies.count)
        for (index, body) in bodies.enumerated() {
            #expect(seen[index].path == "/3/device/" + String(repeating: "ab", count: 40 - index * 7))
            #expect(seen[index].body == Array(body.utf8), "request \(index)")
            let collapse = seen[index].headers.filter { $0.hasPrefix("apns-collapse-id=") }
            #expect(collapse == (index % 2 == 0 ? ["apns-collapse-id=group-\(index)"] : []), "request \(index)")
            #expect(
                seen[index].headers.first
                    == "authorization=bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMzQ1NjcifQ.test.signature")
        }
    }

    @Test(
        "a batch of 150 concurrent requests, recycled: each later request holds its own fields, and every storage is kept"
    )
    func recycledBatches() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 1000))
        let block = try APNSLikeTraffic.block()
        _ = pair.interact()  // SETTINGS both ways, so the client may open 150 streams at once
        var seen: [String: (headers: [String], body: [UInt8])] = [:]
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            let path = String(decoding: request.fields.firstValue(of: ":path") ?? [], as: UTF8.self)
            let headers = (0..<request.fields.count).filter { !request.fields.isPseudo(at: $0) }.map {
                String(decoding: request.fields.name(at: $0), as: UTF8.self) + "="
                    + String(decoding: request.fields.value(at: $0), as: UTF8.self)
            }
            seen[path] = (headers, request.body)
            try? pair.server.respond(to: request.streamID, status: 200, fields: HTTP2HeaderFieldList(), body: [])
            pair.server.recycle(request)
        }
        let batch = 150
        for round in 0..<2 {
            seen.removeAll()
            for index in 0..<batch {
                let tag = UInt64(round * batch + index + 1)
                var fields = HTTP2HeaderFieldList()
                // Lengths vary within a round and between rounds, so reused storage meets longer and shorter data.
                let token =
                    String(repeating: "c", count: 32 + (index * 7 + round * 13) % 90)
                    + APNSLikeTraffic.deviceHex(for: tag)
                fields.append(name: ":path", prefix: "/3/device/", value: token)
                fields.append(name: "x-empty", value: "".utf8)
                if (index + round) % 3 == 0 { fields.append(name: "apns-collapse-id", value: "c-\(tag)".utf8) }
                let body = Array(String(repeating: "z", count: (index * 11 + round * 5) % 200).utf8)
                _ = try pair.client.submitRequest(block: block, fields: fields, body: body, tag: tag)
            }
            _ = pair.interact()
            try #require(seen.count == batch, "round \(round)")
            for index in 0..<batch {
                let tag = UInt64(round * batch + index + 1)
                let path =
                    "/3/device/" + String(repeating: "c", count: 32 + (index * 7 + round * 13) % 90)
                    + APNSLikeTraffic.deviceHex(for: tag)
                let request = try #require(seen[path], "round \(round) request \(index)")
                #expect(request.body == Array(String(repeating: "z", count: (index * 11 + round * 5) % 200).utf8))
                var expected: [String] = [
                    "authorization=bearer eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyMzQ1NjcifQ.test.signature",
                    "apns-topic=com.example.app", "apns-push-type=alert", "x-empty=",
                ]
                if (index + round) % 3 == 0 { expected.append("apns-collapse-id=c-\(tag)") }
                #expect(request.headers.sorted() == expected.sorted(), "round \(round) request \(index)")
            }
            // Every request's storage came back for the next batch, not only the first 64.
            #expect(pair.server.requestStorage.spareFieldListCount == batch, "round \(round)")
        }
    }

    @Test("the response converts to the dispatcher's PushAnswer with its reason and timestamp")
    func answerConversion() throws {
        let pair = try InMemoryHTTP2Pair()
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            try? pair.server.respond(
                to: request.streamID, status: 410, headers: [("apns-id", "00000000-0000-4000-8000-000000000009")],
                body: Array(#"{"reason":"Unregistered","timestamp":1700000000123}"#.utf8))
        }
        let answers = try Self.answers(on: pair, tags: [9])
        #expect(
            answers == [
                PushAnswerSummary(
                    tag: 9, status: 410, reason: "Unregistered", timestamp: 1_700_000_000_123,
                    apnsID: "00000000-0000-4000-8000-000000000009")
            ])
    }

    @Test("a 200's body is not read: a server that sends one with its success cannot give it a reason")
    func successBodyIgnored() throws {
        let pair = try InMemoryHTTP2Pair()
        pair.onServerEvent = { [unowned pair] event in
            guard case .request(let request) = event else { return }
            try? pair.server.respond(
                to: request.streamID, status: request.streamID == 1 ? 200 : 400, headers: [],
                body: Array(#"{"reason":"BadDeviceToken","timestamp":1700000000123}"#.utf8))
        }
        // The same body with a 400 is read, so the test would see a reason on the 200 if it were read there too.
        #expect(
            try Self.answers(on: pair, tags: [1, 2]) == [
                PushAnswerSummary(tag: 1, status: 200, reason: nil, timestamp: nil, apnsID: nil),
                PushAnswerSummary(
                    tag: 2, status: 400, reason: "BadDeviceToken", timestamp: 1_700_000_000_123, apnsID: nil),
            ])
    }

    /// Sends one APNs-like request a tag, each answered before the next, and returns the `PushAnswer`s the client
    /// session made of the responses.
    static func answers(on pair: InMemoryHTTP2Pair, tags: [UInt64]) throws -> [PushAnswerSummary] {
        var answers: [PushAnswerSummary] = []
        pair.onClientEvent = { event in
            guard case .response(let response) = event else { return }
            let answer = response.answer
            answers.append(
                PushAnswerSummary(
                    tag: response.tag, status: answer.status, reason: answer.reason?.description,
                    timestamp: answer.timestamp,
                    apnsID: answer.apnsID))
        }
        for tag in tags {
            var fields = HTTP2HeaderFieldList()
            APNSLikeTraffic.fill(&fields, tag: tag)
            try pair.client.submitRequest(
                block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: tag)
            pair.interact()
        }
        pair.onClientEvent = { _ in }
        return answers
    }

    struct PushAnswerSummary: Equatable {
        var tag: UInt64
        var status: Int
        var reason: String?
        var timestamp: Int64?
        var apnsID: String?
    }

    @Test("duplicate header fields reach the server in order, pseudo-header fields apart")
    func duplicateHeaders() throws {
        let pair = try InMemoryHTTP2Pair()
        var fields = HTTP2HeaderFieldList()
        fields.append(name: ":path", prefix: "/3/device/", value: "abcd".utf8)
        fields.append(name: "apns-topic", value: "com.example.other".utf8)
        fields.append(name: "apns-id", value: "one".utf8)
        fields.append(name: "apns-id", value: "two".utf8)
        try pair.client.submitRequest(
            block: try APNSLikeTraffic.block(), fields: fields, body: APNSLikeTraffic.payload, tag: 1)
        pair.interact()
        let request = try #require(pair.serverRequests.first)
        #expect(request.fields.count(of: "apns-topic") == 2)
        #expect(request.fields.count(of: "apns-id") == 2)
        let topics = request.headers.filter { Array($0.name) == Array("apns-topic".utf8) }.map {
            String(decoding: $0.value, as: UTF8.self)
        }
        #expect(topics == ["com.example.app", "com.example.other"])
        let ids = request.headers.filter { Array($0.name) == Array("apns-id".utf8) }.map {
            String(decoding: $0.value, as: UTF8.self)
        }
        #expect(ids == ["one", "two"])
        #expect(request.fields.count(of: ":path") == 1)
        var names: [String] = []
        request.forEachHeader { name, _ in names.append(String(decoding: name, as: UTF8.self)) }
        #expect(names == ["authorization", "apns-topic", "apns-push-type", "apns-topic", "apns-id", "apns-id"])
    }

    @Test("PING round trip in both directions")
    func ping() throws {
        let pair = try InMemoryHTTP2Pair()
        try pair.client.submitPing(payload: 0x0102_0304_0506_0708)
        pair.interact()
        #expect(pair.clientRecords.contains(.pingAck(0x0102_0304_0506_0708)))
        try pair.server.submitPing(payload: 77)
        pair.interact()
        let serverAcks = pair.serverEvents.compactMap {
            if case .pingAcknowledged(let payload) = $0 { return payload } else { return nil }
        }
        #expect(serverAcks == [77])
        #expect(pair.clientRecords.filter { if case .pingAck = $0 { return true } else { return false } }.count == 1)
    }

    @Test("the shared block outlives the caller's reference until its HEADERS frame is written")
    func blockLifetime() throws {
        let pair = try InMemoryHTTP2Pair(server: HTTP2ServerConfiguration(maxConcurrentStreams: 10))
        pair.interact()  // settings exchanged: 10 slots
        var fields = HTTP2HeaderFieldList()
        for tag in UInt64(1)...3 {
            // A fresh block per request, dropped by the caller before any output is produced.
            let block = try HTTP2HeaderBlock(authority: "host-\(tag).example", fields: [("apns-topic", "topic.\(tag)")])
            APNSLikeTraffic.fill(&fields, tag: tag)
            try pair.client.submitRequest(block: block, fields: fields, body: [], tag: tag)
        }
        fields.removeAll()
        fields.append(name: "x-overwritten", value: "after submit".utf8)  // the list was copied at submit time
        pair.interact()
        let requests = pair.serverRequests
        try #require(requests.count == 3)
        for (index, request) in requests.enumerated() {
            let tag = UInt64(index + 1)
            #expect(APNSLikeTraffic.text(request.authority) == "host-\(tag).example")
            #expect(APNSLikeTraffic.text(request.fields.firstValue(of: "apns-topic")) == "topic.\(tag)")
            #expect(APNSLikeTraffic.text(request.fields.firstValue(of: "apns-id")) == APNSLikeTraffic.apnsID(for: tag))
            #expect(request.fields.count(of: "x-overwritten") == 0)
            #expect(request.body.isEmpty)
        }
    }

    @Test("a block with an invalid header field is refused when built")
    func invalidBlock() {
        #expect(throws: HTTP2Error.invalidHeader("bad name")) { try HTTP2HeaderBlock([("bad name", "x")]) }
        #expect(throws: HTTP2Error.invalidHeader("x-value")) { try HTTP2HeaderBlock([("x-value", "line\nbreak")]) }
        #expect(throws: HTTP2Error.invalidHeader(":")) { try HTTP2HeaderBlock([(":", "x")]) }
        #expect(throws: Never.self) { try HTTP2HeaderBlock([("X-Upper", "ok")]) }
    }
}
