import APNSCore
import Testing

@testable import APNSMock

@Suite("Fault specs")
struct FaultSpecTests {
    @Test(
        "every documented form parses to the fault it names",
        arguments: [
            ("429=0.05", FaultSpec.answer(.tooManyRequests, .rate(0.05))),
            ("500=every:100", .answer(.internalServerError, .every(100))),
            ("503=1", .answer(.serviceUnavailable, .rate(1))),
            ("expired-token=every:1000", .answer(.expiredProviderToken, .every(1000))),
            ("goaway=after:500", .goaway(.after(500))),
            ("goaway=0.25", .goaway(.rate(0.25))),
            ("drop=0.001", .drop(.rate(0.001))),
            ("drop=after:7", .drop(.after(7))),
            ("drop=every:3", .drop(.every(3))),
            ("latency=5ms", .latency(5...5)),
            ("latency=2..20ms", .latency(2...20)),
            ("lower-streams=after:100:to:10", .lowerStreams(after: 100, to: 10)),
            (" 429 = 0 ", .answer(.tooManyRequests, .rate(0))),
        ])
    func parsesGoodSpecs(text: String, expected: FaultSpec) throws {
        #expect(try FaultSpec(parsing: text) == expected)
    }

    @Test("a spec prints back in the grammar it was parsed from")
    func roundTrips() throws {
        for text in [
            "429=0.05", "500=every:100", "goaway=after:500", "latency=2..20ms", "latency=5ms",
            "lower-streams=after:100:to:10", "expired-token=every:1000", "drop=0.001",
        ] {
            #expect(try FaultSpec(parsing: text).description == text)
        }
    }

    @Test(
        "bad specs are rejected with a message naming the spec and the problem",
        arguments: [
            ("429", "expected NAME=VALUE"),
            ("429=", "missing a value"),
            ("418=0.1", "unknown fault '418'"),
            ("429=1.5", "not between 0 and 1"),
            ("429=-0.1", "is not a rate"),
            ("429=nan", "is not a rate"),
            ("429=after:3", "after:N applies only to goaway and drop"),
            ("500=every:0", "at least 1"),
            ("500=every:x", "at least 1"),
            ("goaway=after:", "at least 1"),
            ("latency=5", "needs milliseconds"),
            ("latency=20..2ms", "reversed"),
            ("latency=2...20ms", "whole milliseconds"),
            ("latency=99999ms", "above 60000ms"),
            ("lower-streams=after:100", "after:N:to:M"),
            ("lower-streams=after:100:to:0", "at least 1"),
        ])
    func rejectsBadSpecs(text: String, message: String) {
        #expect {
            try FaultSpec(parsing: text)
        } throws: { error in
            guard let error = error as? MockConfigurationError else { return false }
            return error.isFaultSpecError && error.description.contains(message)
                && error.description.contains("fault spec '")
        }
    }

    @Test("a plan splits comma-separated specs across arguments and refuses the same fault twice")
    func planParsing() throws {
        let plan = try FaultPlan(parsing: ["429=0.05,500=every:100", "latency=2..20ms", ""])
        #expect(
            plan.specs == [
                .answer(.tooManyRequests, .rate(0.05)), .answer(.internalServerError, .every(100)), .latency(2...20),
            ])
        #expect(plan.description == "429=0.05,500=every:100,latency=2..20ms")
        #expect(throws: MockConfigurationError.self) { try FaultPlan(parsing: ["429=0.1", "429=every:5"]) }
        #expect(try FaultPlan(parsing: []).isEmpty)
    }
}
