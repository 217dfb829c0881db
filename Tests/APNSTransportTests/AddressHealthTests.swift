import Testing

@testable import APNSTransport

/// `AddressHealth`: the pool stops dialing first an address that keeps failing while others work, and tries it
/// again later. No I/O; the time is given.
@Suite("address health")
struct AddressHealthTests {
    let start = EventLoopInstant(nanoseconds: 1_000_000_000)
    let blackHole = addressOn443("10.9.9.2")
    let refusing = addressOn443("127.0.0.2")
    let answering = addressOn443("127.0.0.1")
    var all: [SocketAddress] { [blackHole, refusing, answering] }

    func at(_ seconds: Double) -> EventLoopInstant { start.advanced(bySeconds: seconds) }

    @Test("without failures connections spread: connection i starts at address i mod n")
    func spreads() {
        let health = AddressHealth()
        #expect(health.order(all, connection: 0, now: at(0)) == [blackHole, refusing, answering])
        #expect(health.order(all, connection: 1, now: at(0)) == [refusing, answering, blackHole])
        #expect(health.order(all, connection: 2, now: at(0)) == [answering, blackHole, refusing])
        #expect(health.order(all, connection: 3, now: at(0)) == [blackHole, refusing, answering])
    }

    @Test("two failures in a row put an address last; the others spread among themselves")
    func avoids() {
        var health = AddressHealth(avoidAfter: 2, retryAfter: 30)
        health.record(.outrun, for: blackHole, now: at(0))
        #expect(!health.isAvoided(blackHole, now: at(0)), "one failure is not yet a pattern")
        health.record(.timedOut, for: blackHole, now: at(1))
        #expect(health.isAvoided(blackHole, now: at(1)))
        for connection in 0..<6 {
            let order = health.order(all, connection: connection, now: at(2))
            #expect(order.last == blackHole, "connection \(connection): \(order)")
            #expect(Set(order) == Set(all), "still dialed when the others fail")
        }
        #expect(health.order(all, connection: 0, now: at(2)).first == refusing)
        #expect(health.order(all, connection: 1, now: at(2)).first == answering)
    }

    @Test("with every address failing they are all still dialed, fewest failures first")
    func allFailing() {
        var health = AddressHealth(avoidAfter: 1, retryAfter: 30)
        health.record(.failed, for: refusing, now: at(0))
        health.record(.failed, for: refusing, now: at(0))
        health.record(.timedOut, for: blackHole, now: at(0))
        health.record(.failed, for: answering, now: at(0))
        #expect(health.order(all, connection: 0, now: at(1)) == [blackHole, answering, refusing])
    }

    @Test("a connect clears the record; a cancelled attempt says nothing")
    func recovers() {
        var health = AddressHealth(avoidAfter: 2, retryAfter: 30)
        health.record(.failed, for: refusing, now: at(0))
        health.record(.cancelled, for: refusing, now: at(0))
        health.record(.failed, for: refusing, now: at(0))
        #expect(health.isAvoided(refusing, now: at(0)))
        health.record(.connected, for: refusing, now: at(1))
        #expect(!health.isAvoided(refusing, now: at(1)))
        #expect(health.records.isEmpty)
        health.record(.cancelled, for: answering, now: at(1))
        #expect(health.records.isEmpty)
    }

    @Test("an avoided address takes its place again after retryAfter; one more failure avoids it again")
    func retries() {
        var health = AddressHealth(avoidAfter: 2, retryAfter: 30)
        health.record(.timedOut, for: blackHole, now: at(0))
        health.record(.timedOut, for: blackHole, now: at(0))
        #expect(health.isAvoided(blackHole, now: at(29.9)))
        #expect(!health.isAvoided(blackHole, now: at(30)))
        #expect(health.order(all, connection: 0, now: at(30)).first == blackHole)
        health.record(.outrun, for: blackHole, now: at(30.25))
        #expect(health.isAvoided(blackHole, now: at(30.25)))
    }

    @Test("duplicates are dialed once; the memory holds a bounded number of addresses")
    func bounded() {
        var health = AddressHealth(avoidAfter: 1, retryAfter: 30, capacity: 2)
        #expect(health.order([answering, answering, refusing], connection: 0, now: at(0)) == [answering, refusing])
        health.record(.failed, for: blackHole, now: at(0))
        health.record(.failed, for: refusing, now: at(1))
        health.record(.failed, for: answering, now: at(2))
        #expect(health.records.count == 2)
        #expect(health.records[blackHole] == nil, "the one failed longest ago is forgotten")
    }
}
