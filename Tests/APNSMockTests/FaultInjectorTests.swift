import APNSCore
import Testing

@testable import APNSMock

@Suite("Fault injector")
struct FaultInjectorTests {
    private func injector(_ specs: String...) throws -> FaultInjector {
        FaultInjector(plan: try FaultPlan(parsing: specs), seed: 42)
    }

    @Test("rates are right within tolerance over 100k seeded draws", arguments: [0.001, 0.05, 0.5, 0.9])
    func rates(rate: Double) throws {
        var injector = try injector("500=\(rate)")
        var fired = 0
        for _ in 0..<100_000 where injector.replacementAnswer(tokenAuthenticated: true) != nil { fired += 1 }
        let expected = rate * 100_000
        let tolerance = 5 * (100_000 * rate * (1 - rate)).squareRoot() + 1  // five standard deviations
        #expect(abs(Double(fired) - expected) <= tolerance, "fired \(fired), expected about \(expected)")
    }

    @Test("drop rate is right within tolerance over 100k seeded draws")
    func dropRate() throws {
        var injector = try injector("drop=0.01")
        var fired = 0
        for _ in 0..<100_000 where injector.dropsConnection(answeredOnConnection: 5) { fired += 1 }
        #expect(abs(fired - 1000) <= 160, "fired \(fired)")
    }

    @Test("rate 0 never fires and rate 1 always fires")
    func extremes() throws {
        var never = try injector("429=0")
        var always = try injector("429=1")
        for _ in 0..<10_000 {
            let nothing = never.replacementAnswer(tokenAuthenticated: true)
            let something = always.replacementAnswer(tokenAuthenticated: true)
            #expect(nothing == nil)
            #expect(something == .tooManyRequests)
        }
    }

    @Test("every:N fires on exactly every Nth eligible request")
    func every() throws {
        var injector = try injector("503=every:100")
        var firing: [Int] = []
        for index in 1...1000 where injector.replacementAnswer(tokenAuthenticated: false) != nil {
            firing.append(index)
        }
        #expect(firing == Array(stride(from: 100, through: 1000, by: 100)))
    }

    @Test("the same seed reproduces the same draws, another seed does not")
    func deterministic() throws {
        let plan = try FaultPlan(parsing: ["429=0.3", "latency=1..50ms"])
        var first = FaultInjector(plan: plan, seed: 7)
        var second = FaultInjector(plan: plan, seed: 7)
        var other = FaultInjector(plan: plan, seed: 8)
        var a: [String] = []
        var b: [String] = []
        var c: [String] = []
        for _ in 0..<200 {
            a.append(
                "\(String(describing: first.replacementAnswer(tokenAuthenticated: true))) \(first.latencyMilliseconds() ?? -1)"
            )
            b.append(
                "\(String(describing: second.replacementAnswer(tokenAuthenticated: true))) \(second.latencyMilliseconds() ?? -1)"
            )
            c.append(
                "\(String(describing: other.replacementAnswer(tokenAuthenticated: true))) \(other.latencyMilliseconds() ?? -1)"
            )
        }
        #expect(a == b)
        #expect(a != c)
    }

    @Test("latency stays inside its range and covers both ends")
    func latencyRange() throws {
        var injector = try injector("latency=2..20ms")
        var seen: Set<Int> = []
        for _ in 0..<10_000 {
            let drawn = injector.latencyMilliseconds()
            let delay = try #require(drawn)
            #expect((2...20).contains(delay))
            seen.insert(delay)
        }
        #expect(seen == Set(2...20))
        var fixed = try self.injector("latency=5ms")
        let fixedDelay = fixed.latencyMilliseconds()
        #expect(fixedDelay == 5)
        var none = try self.injector("429=0.1")
        let noDelay = none.latencyMilliseconds()
        #expect(noDelay == nil)
    }

    @Test("expired-token only replaces answers to token-authenticated requests, and wins over 500")
    func expiredTokenPrecedence() throws {
        var injector = try injector("500=1", "expired-token=1")
        let withToken = injector.replacementAnswer(tokenAuthenticated: true)
        let withCertificate = injector.replacementAnswer(tokenAuthenticated: false)
        #expect(withToken == .expiredProviderToken)
        #expect(withCertificate == .internalServerError)
    }

    @Test("after:N triggers fire at exactly the Nth answer of a connection")
    func afterTriggers() throws {
        var injector = try injector("goaway=after:3", "drop=after:5", "lower-streams=after:2:to:10")
        let goawayAt = (1...6).filter { injector.sendsGoaway(answeredOnConnection: $0) }
        let dropAt = (0...8).filter { injector.dropsConnection(answeredOnConnection: $0) }
        #expect(goawayAt == [3])
        #expect(dropAt == [5])
        #expect(injector.loweredStreamLimit(answeredOnConnection: 1) == nil)
        #expect(injector.loweredStreamLimit(answeredOnConnection: 2) == 10)
        #expect(injector.loweredStreamLimit(answeredOnConnection: 3) == nil)
    }
}
