import APNSCore
import Testing

@testable import APNSMock

/// Connection-level behaviour: the stream limit raise, faults turned into actions, GOAWAY and drops.
@Suite("Validator: connection actions and faults")
struct MockValidatorConnectionTests {
    typealias Support = MockTestSupport

    private func setup(faults: String..., configuration: MockConfiguration = MockConfiguration()) throws -> (
        MockValidator, MockConnectionState
    ) {
        var configuration = configuration
        configuration.faults = try FaultPlan(parsing: faults)
        return try Support.certificateSetup(configuration)
    }

    @Test("a connection starts at one stream and the first authenticated request raises it, once")
    func raiseOnce() throws {
        var (validator, connection) = try setup()
        #expect(connection.streamLimit == 1)
        #expect(!connection.isAuthenticated)
        let early = validator.handle(Support.request(method: "GET"), connection: &connection)
        #expect(early.actions == [])
        #expect(!connection.isAuthenticated)
        let first = validator.handle(
            Support.request(streamID: 3, path: "/3/device/\(Support.token(endingIn: "dead"))"), connection: &connection)
        #expect(Support.outcome(first) == "410 Unregistered")
        #expect(first.actions == [.raiseStreamLimit(1000)])
        #expect(connection.isAuthenticated)
        #expect(connection.streamLimit == 1000)
        let second = validator.handle(Support.request(streamID: 5), connection: &connection)
        #expect(second.actions == [])
    }

    @Test("the raise goes to the configured maximum")
    func configuredMaximum() throws {
        var (validator, connection) = try setup(configuration: MockConfiguration(maxConcurrentStreams: 500))
        #expect(validator.handle(Support.request(), connection: &connection).actions == [.raiseStreamLimit(500)])
        #expect(throws: MockConfigurationError.self) {
            try MockValidator(configuration: MockConfiguration(maxConcurrentStreams: 0))
        }
    }

    @Test("goaway=after:N sends GOAWAY Shutdown with the Nth stream, then refuses higher streams")
    func goawayAfter() throws {
        var (validator, connection) = try setup(faults: "goaway=after:3")
        var decisions: [MockDecision] = []
        for stream in stride(from: Int32(1), through: 9, by: 2) {
            decisions.append(validator.handle(Support.request(streamID: stream), connection: &connection))
        }
        #expect(decisions[1].actions == [])
        #expect(
            decisions[2].actions == [
                .goaway(lastStreamID: 5, errorCode: 0, debugData: Array(#"{"reason":"Shutdown"}"#.utf8))
            ])
        #expect(Support.outcome(decisions[2]) == "200")
        #expect(decisions[3].response == nil && decisions[3].actions == [.refuseStream])
        #expect(decisions[4].actions == [.refuseStream])
        // A lower stream that completes after the GOAWAY is still answered.
        let late = validator.handle(Support.request(streamID: 4), connection: &connection)
        #expect(Support.outcome(late) == "200")
        #expect(connection.goawayLastStreamID == 5)
        #expect(validator.counters.goaways == 1 && validator.counters.refusedStreams == 2)
    }

    @Test("GOAWAY names the highest stream answered, even when a lower stream triggers it")
    func goawayHighestStream() throws {
        var (validator, connection) = try setup(faults: "goaway=after:2")
        _ = validator.handle(Support.request(streamID: 7), connection: &connection)
        let trigger = validator.handle(Support.request(streamID: 5), connection: &connection)
        #expect(trigger.actions == [.goaway(lastStreamID: 7, errorCode: 0, debugData: MockValidator.shutdownDebugData)])
        let lower = validator.handle(Support.request(streamID: 3), connection: &connection)
        #expect(Support.outcome(lower) == "200")
        #expect(validator.handle(Support.request(streamID: 9), connection: &connection).actions == [.refuseStream])
    }

    @Test("drop=after:N answers N requests, then drops without answering")
    func dropAfter() throws {
        var (validator, connection) = try setup(faults: "drop=after:2")
        let one = validator.handle(Support.request(streamID: 1), connection: &connection)
        let two = validator.handle(Support.request(streamID: 3), connection: &connection)
        let three = validator.handle(Support.request(streamID: 5), connection: &connection)
        let four = validator.handle(Support.request(streamID: 7), connection: &connection)
        #expect(Support.outcome(one) == "200" && Support.outcome(two) == "200")
        #expect(three.response == nil && three.actions == [.dropConnection])
        #expect(four.response == nil && four.actions == [.dropConnection])
        #expect(connection.isDropped)
        #expect(validator.counters.drops == 2)
    }

    @Test("lower-streams=after:N:to:M lowers the limit once, after the Nth answer")
    func lowerStreams() throws {
        var (validator, connection) = try setup(faults: "lower-streams=after:2:to:10")
        let first = validator.handle(Support.request(streamID: 1), connection: &connection)
        let second = validator.handle(Support.request(streamID: 3), connection: &connection)
        let third = validator.handle(Support.request(streamID: 5), connection: &connection)
        #expect(first.actions == [.raiseStreamLimit(1000)])
        #expect(second.actions == [.lowerStreamLimit(10)])
        #expect(third.actions == [])
        #expect(connection.streamLimit == 10)
    }

    @Test("latency puts a delay first in the actions of every answer")
    func latency() throws {
        var (validator, connection) = try setup(faults: "latency=7ms")
        let first = validator.handle(Support.request(), connection: &connection)
        #expect(first.actions == [.delay(milliseconds: 7), .raiseStreamLimit(1000)])
        let rejected = validator.handle(Support.request(streamID: 3, method: "GET"), connection: &connection)
        #expect(rejected.actions == [.delay(milliseconds: 7)])
    }

    @Test("answer faults replace only would-be-200 answers, with the exact reason and body")
    func answerFaults() throws {
        var (validator, connection) = try setup(faults: "500=every:2", "503=0")
        var outcomes: [String] = []
        for index in 0..<6 {
            let method = index == 2 ? "GET" : "POST"
            let decision = validator.handle(
                Support.request(streamID: Int32(2 * index + 1), method: method), connection: &connection)
            outcomes.append(Support.outcome(decision))
            if decision.response?.status == 500 {
                #expect(Support.body(decision.response) == #"{"reason":"InternalServerError"}"#)
            }
        }
        #expect(
            outcomes == [
                "200", "500 InternalServerError", "405 MethodNotAllowed", "200", "500 InternalServerError", "200",
            ])
        #expect(validator.counters.faultAnswers == 2)
    }

    @Test("429 and 503 faults answer their statuses")
    func otherStatuses() throws {
        var (validator, connection) = try setup(faults: "429=1")
        #expect(Support.outcome(validator.handle(Support.request(), connection: &connection)) == "429 TooManyRequests")
        var (other, otherConnection) = try setup(faults: "503=1")
        #expect(
            Support.outcome(other.handle(Support.request(), connection: &otherConnection)) == "503 ServiceUnavailable")
    }

    @Test("a seeded run is reproducible: the same faults land on the same requests")
    func reproducible() throws {
        func run(seed: UInt64) throws -> [String] {
            var configuration = MockConfiguration(seed: seed)
            configuration.faults = try FaultPlan(parsing: ["429=0.2", "drop=0.05", "latency=0..9ms"])
            var validator = try MockValidator(configuration: configuration, clock: .fixed(epochSeconds: Support.now))
            var outcomes: [String] = []
            for _ in 0..<20 {
                var connection = validator.openConnection(clientCertificate: Support.certificate)
                for stream in 0..<10 {
                    let decision = validator.handle(
                        Support.request(streamID: Int32(2 * stream + 1)), connection: &connection)
                    outcomes.append(
                        "\(Support.outcome(decision)) \(decision.actions) \(decision.response?.apnsID.description ?? "-")"
                    )
                }
            }
            return outcomes
        }
        #expect(try run(seed: 1) == run(seed: 1))
        #expect(try run(seed: 1) != run(seed: 2))
    }

    @Test("the per-connection topic memo never lets another push type or topic through")
    func topicMemo() throws {
        var (validator, connection) = try setup()
        let steps: [(topic: String?, pushType: String?, expected: String)] = [
            (Support.topic, "alert", "200"),
            (Support.topic, "alert", "200"),
            (Support.topic, "voip", "400 InvalidPushType"),
            ("com.other", "alert", "400 TopicDisallowed"),
            (Support.topic, nil, "200"),  // inferred from the topic
            (Support.topic + ".voip", "voip", "200"),
            (Support.topic + ".voip", "alert", "400 InvalidPushType"),
            (Support.topic + ".voip", nil, "200"),
            (Support.topic, "alert", "200"),
            (nil, "alert", "200"),  // the certificate's only topic stands in
            ("", "alert", "200"),
            (Support.topic, "", "400 InvalidPushType"),
        ]
        for (index, step) in steps.enumerated() {
            var headers: [(String, String)] = []
            if let topic = step.topic { headers.append(("apns-topic", topic)) }
            if let pushType = step.pushType { headers.append(("apns-push-type", pushType)) }
            let decision = validator.handle(
                Support.request(streamID: Int32(2 * index + 1), headers: headers), connection: &connection)
            #expect(Support.outcome(decision) == step.expected, "step \(index): \(step)")
        }
    }
}
