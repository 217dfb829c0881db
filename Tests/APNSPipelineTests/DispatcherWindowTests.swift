import APNSCore
import Foundation
import Testing

@testable import APNSPipeline

/// The dispatcher keeps no more requests in flight than its window, whatever the transport offers.
@Suite("Dispatcher in-flight window")
struct DispatcherWindowTests {
    /// Lets an answer closure look at the run it belongs to (weakly: the run holds the closure).
    private final class RunBox {
        weak var run: DispatchRun?
        var violations = 0
        var largestWindow = 0
    }

    /// A run over a transport with 1000 slots whose answers check, at every flush, the window against what is in
    /// flight (a flush follows each loop turn's submits, so that is the most in flight that turn).
    private func run(
        records: Int, configuration: DispatcherConfiguration = DispatcherConfiguration(),
        answer: @escaping (String) -> PushOutcome
    ) -> (DispatchRun, RunBox) {
        let box = RunBox()
        let run = DispatchRun(
            records: (1...records).map { Fixture.record($0, token: Fixture.token($0)) }, capacity: 1000,
            configuration: configuration
        ) { token, _ in
            if let run = box.run {
                if run.transport.inFlight.count > run.dispatcher.window.size { box.violations += 1 }
                box.largestWindow = max(box.largestWindow, run.dispatcher.window.size)
            }
            return answer(token)
        }
        box.run = run
        return (run, box)
    }

    @Test("never more in flight than the window; the window opens beyond its start, within the transport's slots")
    func neverAboveWindow() throws {
        let (run, box) = run(records: 5000) { _ in Fixture.ok() }
        let summary = try #require(run.run())
        #expect(summary.count(.delivered) == 5000)
        #expect(box.violations == 0)
        #expect(run.transport.maximumInFlight > 16, "the window never grew")
        #expect(run.transport.maximumInFlight <= box.largestWindow)
        #expect(summary.maximumInFlight == run.transport.maximumInFlight)
        #expect((16...1000).contains(summary.inFlightWindow))
    }

    @Test("the transport hears the window's reach whenever it changes, and never less than the window holds")
    func transportHearsTheReach() throws {
        var tooLow = 0
        let box = RunBox()
        let run = DispatchRun(
            records: (1...5000).map { Fixture.record($0, token: Fixture.token($0)) }, capacity: 1000
        ) { _, _ in
            if let run = box.run, let told = run.transport.reachesTold.last, told < run.dispatcher.window.size {
                tooLow += 1
            }
            return Fixture.ok()
        }
        box.run = run
        let summary = try #require(run.run())
        #expect(summary.count(.delivered) == 5000)
        let told = run.transport.reachesTold
        #expect(told.first == run.dispatcher.window.settings.maximum, "slow start's reach: the maximum")
        #expect(told.count >= 2 && told.last == run.dispatcher.window.reach, "told \(told)")
        #expect(zip(told, told.dropFirst()).allSatisfy { $0 != $1 }, "told again without a change: \(told)")
        #expect(tooLow == 0, "the transport was told less than the window held")
    }

    @Test("--max-in-flight caps what is in flight")
    func maximumInFlight() throws {
        var configuration = DispatcherConfiguration()
        configuration.window.maximum = 10
        let (run, box) = run(records: 500, configuration: configuration) { _ in Fixture.ok() }
        let summary = try #require(run.run())
        #expect(summary.count(.delivered) == 500)
        #expect(run.transport.maximumInFlight == 10)
        #expect(box.violations == 0)
        #expect(summary.inFlightWindow == 10)
    }

    @Test("a wrong topic stops the campaign within the first window, not after a thousand requests")
    func wrongTopicStopsEarly() throws {
        let (run, _) = run(records: 2000) { _ in Fixture.rejected(400, .topicDisallowed) }
        let summary = try #require(run.run())
        guard case .stoppedEarly = summary.ending else {
            Issue.record("not stopped early: \(summary.ending)")
            return
        }
        // The first window, plus at most two requests per answer before the fifth rejection stops the campaign
        // (each answer frees a slot and, in slow start, widens the window by one).
        #expect(run.transport.totalSends <= 16 + 2 * 5, "\(run.transport.totalSends) requests before stopping")
        #expect(run.sink.results.count == 2000, "every record still gets its line")
    }

    @Test("the summary shows the window in its text and JSON")
    func summaryShowsWindow() throws {
        var configuration = DispatcherConfiguration()
        configuration.window.maximum = 7
        let (run, _) = run(records: 50, configuration: configuration) { _ in Fixture.ok() }
        let summary = try #require(run.run())
        #expect(
            summary.text(resultsPath: nil).contains(
                "in flight: at most 7 requests at once; the adaptive limit was 7 at the end"))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(summary.json(connections: 1))) as? [String: Any])
        #expect(json["in_flight_window"] as? Int == 7)
        #expect(json["maximum_in_flight"] as? Int == 7)
    }
}
