import APNSCore
import Testing

@testable import APNSTransport

/// The pool widens rather than deepens (`ConnectionPoolStateMachine.widenIfNeeded`): a few connections first, one
/// more whenever the room left on them falls below one connection's share, each carrying at most that share
/// while a slot is idle, so a dropped connection puts few requests in doubt. Virtual time, no sockets.
@Suite("connection pool widening")
struct PoolWideningTests {
    typealias Load = ConnectionPoolStateMachine.Load
    typealias ID = ConnectionPoolStateMachine.ConnectionID

    /// Readies `id` with `available` streams and records an answer on it.
    private func readyAndAnswering(_ pool: inout PoolMachineHarness, _ id: ID, available: Int = 100) {
        pool.apply(pool.machine.connectionReady(id, load: Load(available: available, inFlight: 0)))
        pool.apply(pool.machine.connectionAnswered(id))
    }

    /// Starts `count` requests where the machine picks, each connection's server allowing 100 streams; returns
    /// what `widenIfNeeded` did after each, in order, and the requests in flight on each connection.
    @discardableResult
    private func submit(
        _ count: Int, _ pool: inout PoolMachineHarness, inFlight: inout [ID: Int]
    ) -> [[ConnectionPoolStateMachine.Action]] {
        var widenings: [[ConnectionPoolStateMachine.Action]] = []
        for _ in 0..<count {
            guard let id = pool.pick() else { break }
            inFlight[id, default: 0] += 1
            let load = Load(available: 100 - inFlight[id, default: 0], inFlight: inFlight[id, default: 0])
            pool.apply(pool.machine.requestStartedOrEnded(id, load: load))
            widenings.append(pool.apply(pool.machine.widenIfNeeded()))
        }
        return widenings
    }

    @Test("a connection carries at most its share; more open while the room left is less than what is in flight")
    func widensAsTheWindowGrows() throws {
        var pool = PoolMachineHarness(connections: 6, initial: 2, streamsPerConnection: 10, stagger: 0)
        pool.apply(pool.machine.start())
        #expect(pool.opened.map(\.value) == [0, 1])
        #expect(pool.machine.slots[2...].allSatisfy { $0 == .idle })
        for id in pool.opened { readyAndAnswering(&pool, id) }
        #expect(pool.machine.freeStreams == 20, "ten each, though the servers allow 100")
        #expect(pool.apply(pool.machine.widenIfNeeded()).isEmpty)

        var inFlight: [ID: Int] = [:]
        let first = submit(11, &pool, inFlight: &inFlight)
        #expect(
            first.prefix(10).allSatisfy { $0.isEmpty }, "room of 10 or more left, as much as in flight: nothing opens")
        #expect(first[10] == [.open(ID(value: 2))], "11 in flight, room 9: the third slot opens")
        #expect(
            inFlight == [ID(value: 1): 10, ID(value: 0): 1], "packed: the last one readied first, while it has room")

        // While the third connects it counts for its share (room 19 for 12 in flight): nothing opens.
        #expect(submit(1, &pool, inFlight: &inFlight) == [[]])
        #expect(
            submit(8, &pool, inFlight: &inFlight) == [[], [], [], [.open(ID(value: 3))], [], [], [], []],
            "16 in flight, room 14: the fourth")
        #expect(pool.pick() == nil && pool.machine.freeStreams == 0, "each at its share")

        // Readied, a connection takes its share, no more; the last slots open as what is in flight grows.
        for id in [ID(value: 2), ID(value: 3)] { readyAndAnswering(&pool, id) }
        #expect(submit(20, &pool, inFlight: &inFlight).flatMap { $0 } == [.open(ID(value: 4)), .open(ID(value: 5))])
        #expect(pool.machine.idleSlots == 0 && pool.pick() == nil)
        #expect(inFlight.values.sorted() == [10, 10, 10, 10])
        #expect(pool.apply(pool.machine.widenIfNeeded()).isEmpty, "no idle slot left")
    }

    @Test(
        "the pool's default keeps room for eight times what is in flight: connections open rounds ahead of the window")
    func roomAhead() throws {
        var pool = PoolMachineHarness(
            connections: 32, initial: 3, streamsPerConnection: 128, roomPerRequestInFlight: 8,
            stagger: 0)
        pool.apply(pool.machine.start())
        for id in pool.opened { readyAndAnswering(&pool, id, available: 1000) }
        // 64 in flight on one connection: 512 wanted, 2 × 128 + 64 left: two more shares.
        pool.apply(pool.machine.requestStartedOrEnded(pool.opened[0], load: Load(available: 936, inFlight: 64)))
        #expect(pool.apply(pool.machine.widenIfNeeded()) == [.open(ID(value: 3)), .open(ID(value: 4))])
        #expect(pool.apply(pool.machine.widenIfNeeded()).isEmpty, "connecting ones count for their share")
        #expect(pool.machine.freeStreams == 64 + 128 + 128, "each connection still takes at most its share")
    }

    @Test(
        "room is kept no further than one share beyond what the sender expects in flight: on loopback 256 in flight opened 18 connections"
    )
    func roomStopsAtTheSendersReach() throws {
        func pool(expecting reach: Int?) -> (PoolMachineHarness, [ConnectionPoolStateMachine.Action]) {
            var pool = PoolMachineHarness(
                connections: 32, initial: 2, streamsPerConnection: 128, roomPerRequestInFlight: 8, stagger: 0)
            pool.apply(pool.machine.start())
            for id in pool.opened { readyAndAnswering(&pool, id, available: 1000) }
            if let reach { pool.apply(pool.machine.expectInFlight(atMost: reach)) }
            for id in pool.opened {
                pool.apply(pool.machine.requestStartedOrEnded(id, load: Load(available: 872, inFlight: 128)))
            }
            let widened = pool.apply(pool.machine.widenIfNeeded())
            return (pool, widened)
        }
        // 256 in flight, both connections at their share: 2,048 wanted without a reach, 16 shares.
        let (unbounded, opened) = pool(expecting: nil)
        #expect(opened.count == 16 && unbounded.machine.idleSlots == 14)
        // The window may reach 512: 256 more and one share, 384, three connections.
        var (bounded, three) = pool(expecting: 512)
        #expect(three == [.open(ID(value: 2)), .open(ID(value: 3)), .open(ID(value: 4))])
        #expect(bounded.apply(bounded.machine.widenIfNeeded()).isEmpty, "connecting, they count for their shares")
        // A reach below what is in flight still keeps one share for a drop.
        var (spare, one) = pool(expecting: 100)
        #expect(one == [.open(ID(value: 2))])
        #expect(spare.apply(spare.machine.widenIfNeeded()).isEmpty)
        // The reach grows: the room follows it.
        bounded.apply(bounded.machine.expectInFlight(atMost: 1024))
        #expect(bounded.apply(bounded.machine.widenIfNeeded()).count == 4, "896 wanted, 384 kept: four more")
    }

    @Test("a slot waiting for its staggered first open opens at once when the room is short, before an idle slot")
    func staggeredSlotOpensFirst() throws {
        var pool = PoolMachineHarness(
            connections: 8, initial: 3, streamsPerConnection: 10, roomPerRequestInFlight: 1, stagger: 0.1)
        #expect(pool.apply(pool.machine.start()).contains(.schedule(.open(slot: 2), after: 0.2)))
        readyAndAnswering(&pool, ID(value: 0))
        pool.apply(pool.machine.requestStartedOrEnded(ID(value: 0), load: Load(available: 90, inFlight: 10)))
        #expect(
            pool.apply(pool.machine.widenIfNeeded()) == [.cancel(.open(slot: 1)), .open(ID(value: 1))],
            "room 0 for 10: the second initial slot opens now, not at 0.1 s, and no idle one")
        #expect(pool.machine.idleSlots == 5)
        pool.advance(0.1)
        #expect(pool.opened.map(\.value) == [0, 1], "its timer was cancelled")
        pool.advance(0.1)
        #expect(pool.opened.map(\.value) == [0, 1, 2], "the third opens at its time")
    }

    /// Four ready, answered connections of 10 streams, spares closing after 10 s idle; `busy` requests in flight on
    /// the first.
    private func idlePool(busy: Int) -> PoolMachineHarness {
        var pool = PoolMachineHarness(
            connections: 6, initial: 4, streamsPerConnection: 10, closeIdleAfter: 10, stagger: 0)
        pool.apply(pool.machine.start())
        for id in pool.opened { readyAndAnswering(&pool, id) }
        pool.apply(pool.machine.requestStartedOrEnded(ID(value: 0), load: Load(available: 100 - busy, inFlight: busy)))
        return pool
    }

    @Test("a spare that carried nothing since the last check closes, the last first, its slot idle again")
    func idleSpareCloses() throws {
        var pool = idlePool(busy: 5)
        #expect(pool.advance(9.9).isEmpty)
        #expect(pool.advance(0.1) == [.schedule(.idleCheck, after: 10), .close(ID(value: 3))])
        #expect(pool.machine.slots[3] == .draining(ID(value: 3), inFlight: 0), "it takes no request while it closes")
        pool.apply(pool.machine.connectionClosed(ID(value: 3), error: nil, hadAnswer: true, serverSpoke: true))
        #expect(pool.machine.slots[3] == .idle && pool.machine.idleSlots == 3)
        #expect(pool.advance(10).contains(.close(ID(value: 2))), "one a check")
        pool.apply(pool.machine.connectionClosed(ID(value: 2), error: nil, hadAnswer: true, serverSpoke: true))
        // 5 in flight on the first: room 5 there and 10 on the second; without the second, 5 < one share.
        #expect(pool.advance(10) == [.schedule(.idleCheck, after: 10)], "the spare a drop needs stays")
        #expect(pool.machine.activeConnectionCount == 2)
        // The load grows: the idle slots open again.
        pool.apply(pool.machine.requestStartedOrEnded(ID(value: 0), load: Load(available: 90, inFlight: 10)))
        pool.apply(pool.machine.requestStartedOrEnded(ID(value: 1), load: Load(available: 90, inFlight: 10)))
        #expect(pool.apply(pool.machine.widenIfNeeded()) == [.open(ID(value: 4)), .open(ID(value: 5))])
    }

    @Test("a spare that carried a request since the last check stays, and so does every connection without the check")
    func busySpareStays() throws {
        var pool = idlePool(busy: 0)
        pool.apply(pool.machine.requestStartedOrEnded(ID(value: 3), load: Load(available: 99, inFlight: 1)))
        pool.apply(pool.machine.requestStartedOrEnded(ID(value: 3), load: Load(available: 100, inFlight: 0)))
        #expect(pool.advance(10) == [.schedule(.idleCheck, after: 10)], "it carried one")
        #expect(pool.advance(10).contains(.close(ID(value: 3))), "idle through the next interval: it closes")
        var plain = PoolMachineHarness(connections: 4, initial: 4, streamsPerConnection: 10, stagger: 0)
        plain.apply(plain.machine.start())
        for id in plain.opened { readyAndAnswering(&plain, id) }
        #expect(plain.advance(100).isEmpty, "no check: nothing closes")
        var zero = PoolMachineHarness(connections: 2, initial: 2, closeIdleAfter: 0, stagger: 0)
        #expect(
            !zero.apply(zero.machine.start()).contains(.schedule(.idleCheck, after: 0)), "0: no check, no busy timer")
    }

    @Test("a spare closing when the pool closes is closed for good; one that is no longer the last reopens")
    func retiringSpareAndClose() throws {
        var closing = idlePool(busy: 0)
        #expect(closing.advance(10).contains(.close(ID(value: 3))))
        let closed = closing.apply(closing.machine.closeRequested(gracePeriod: 5))
        #expect(closed.contains(.cancel(.idleCheck)))
        closing.apply(closing.machine.connectionClosed(ID(value: 3), error: nil, hadAnswer: true, serverSpoke: true))
        #expect(closing.machine.slots[3] == .closed)

        var reopened = idlePool(busy: 10)
        #expect(reopened.advance(10).contains(.close(ID(value: 3))), "room 30 without it, 10 wanted")
        // The load grows while it closes: the pool widens past it.
        reopened.apply(
            reopened.machine.requestStartedOrEnded(ID(value: 1), load: Load(available: 90, inFlight: 10)))
        reopened.apply(
            reopened.machine.requestStartedOrEnded(ID(value: 2), load: Load(available: 95, inFlight: 5)))
        #expect(reopened.apply(reopened.machine.widenIfNeeded()) == [.open(ID(value: 4)), .open(ID(value: 5))])
        reopened.apply(
            reopened.machine.connectionClosed(ID(value: 3), error: nil, hadAnswer: true, serverSpoke: true))
        #expect(reopened.machine.slots[3] == .backingOff(attempts: 0), "not the last: replaced as any answered one")
    }

    @Test("a room short by several shares opens as many slots at once")
    func opensSeveralAtOnce() throws {
        var pool = PoolMachineHarness(connections: 8, initial: 1, streamsPerConnection: 10, stagger: 0)
        pool.apply(pool.machine.start())
        readyAndAnswering(&pool, ID(value: 0))
        // A server that took ten at once (a whole turn's submits before the pool widened).
        pool.apply(pool.machine.requestStartedOrEnded(ID(value: 0), load: Load(available: 90, inFlight: 10)))
        #expect(pool.apply(pool.machine.widenIfNeeded()) == [.open(ID(value: 1))], "room 0 for 10: one share")
        var big = PoolMachineHarness(connections: 8, initial: 2, streamsPerConnection: 10, stagger: 0)
        big.apply(big.machine.start())
        for id in big.opened { readyAndAnswering(&big, id) }
        for id in big.opened {
            big.apply(big.machine.requestStartedOrEnded(id, load: Load(available: 90, inFlight: 10)))
        }
        #expect(
            big.apply(big.machine.widenIfNeeded()) == [.open(ID(value: 2)), .open(ID(value: 3))],
            "room 0 for 20: two shares")
    }

    @Test(
        "a connection the server has not answered on yet counts for its share: a first limit of one stream opens nothing"
    )
    func firstStreamLimitDoesNotWiden() throws {
        var pool = PoolMachineHarness(connections: 8, initial: 2, streamsPerConnection: 100, stagger: 0)
        pool.apply(pool.machine.start())
        for id in pool.opened {
            pool.apply(pool.machine.connectionReady(id, load: Load(available: 1, inFlight: 0)))
            #expect(pool.pick() == id)
            pool.apply(pool.machine.requestStartedOrEnded(id, load: Load(available: 0, inFlight: 1)))
            #expect(pool.apply(pool.machine.widenIfNeeded()).isEmpty)
        }
        #expect(pool.opened.count == 2)
        // Once answered its real room counts (none: its server still allows one stream), and the room left, 99 on
        // the other, is short of one share: the third opens, and counts for its share while it connects.
        pool.apply(pool.machine.connectionAnswered(pool.opened[0]))
        #expect(pool.apply(pool.machine.widenIfNeeded()) == [.open(ID(value: 2))])
        #expect(pool.apply(pool.machine.widenIfNeeded()).isEmpty)
    }

    @Test("a dropped connection's slot reopens at once, and the room short, before an idle slot does")
    func dropDoesNotStall() throws {
        var pool = PoolMachineHarness(connections: 4, initial: 2, streamsPerConnection: 10, stagger: 0)
        pool.apply(pool.machine.start())
        for id in pool.opened { readyAndAnswering(&pool, id) }
        var inFlight: [ID: Int] = [:]
        #expect(submit(10, &pool, inFlight: &inFlight).allSatisfy { $0.isEmpty })
        let dropped = ID(value: 0)
        let closed = pool.apply(
            pool.machine.connectionClosed(
                dropped, error: TransportError(.closedByPeer, "reset"), hadAnswer: true, serverSpoke: true))
        #expect(closed == [.schedule(.open(slot: 0), after: 0), .reportFreeStreams], "it had answered: no back-off")
        #expect(
            pool.apply(pool.machine.widenIfNeeded()) == [.cancel(.open(slot: 0)), .open(ID(value: 2))],
            "5 left on one: short of 10, the dropped slot reopens now")
        #expect(pool.machine.slots[0] == .starting(ID(value: 2), attempts: 0))
        #expect(pool.machine.slots[2...].allSatisfy { $0 == .idle }, "no idle slot opens for it")
        pool.advance(0)
        #expect(pool.opened.map(\.value) == [0, 1, 2], "its timer was cancelled: nothing more opens")
    }

    @Test("nothing widens while no connection has answered, nor after a connection failed since the last answer")
    func noWideningWhileFailing() throws {
        var pool = PoolMachineHarness(connections: 8, initial: 2, streamsPerConnection: 10, stagger: 0)
        pool.apply(pool.machine.start())
        for id in pool.opened { pool.apply(pool.machine.connectionReady(id, load: Load(available: 100, inFlight: 0))) }
        // Full, but no answer yet (a server that breaks every connection on its first request never answers).
        for id in pool.opened {
            pool.apply(pool.machine.requestStartedOrEnded(id, load: Load(available: 90, inFlight: 10)))
        }
        pool.apply(pool.machine.connectionAnswered(pool.opened[1]))
        pool.apply(
            pool.machine.connectionClosed(
                pool.opened[0], error: TransportError(.http2ProtocolError, "PUSH_PROMISE"), hadAnswer: false,
                serverSpoke: true))
        #expect(pool.machine.failuresInARow == 1)
        #expect(pool.apply(pool.machine.widenIfNeeded()).isEmpty, "a failure since the last answer")
        // The failed slot reopens after its back-off; its new connection answers: the pool works again.
        pool.advance(0.25)
        let reopened = try #require(pool.lastOpened)
        #expect(reopened == ID(value: 2))
        pool.apply(pool.machine.connectionReady(reopened, load: Load(available: 100, inFlight: 0)))
        pool.apply(pool.machine.requestStartedOrEnded(reopened, load: Load(available: 95, inFlight: 5)))
        pool.apply(pool.machine.connectionAnswered(reopened))
        #expect(pool.apply(pool.machine.widenIfNeeded()) == [.open(ID(value: 3))], "room 5: the third slot opens")
    }

    @Test("closing closes the idle slots with the rest, and nothing opens while closing or after a failure")
    func noWideningWhenNotRunning() throws {
        var failing = PoolMachineHarness(connections: 3, initial: 1, streamsPerConnection: 1, stagger: 0)
        failing.apply(failing.machine.start())
        readyAndAnswering(&failing, ID(value: 0), available: 0)
        failing.apply(failing.machine.failed(.transport(TransportError(.timeout, "test"))))
        #expect(failing.apply(failing.machine.widenIfNeeded()).isEmpty)

        var pool = PoolMachineHarness(connections: 3, initial: 1, streamsPerConnection: 1, stagger: 0)
        pool.apply(pool.machine.start())
        readyAndAnswering(&pool, ID(value: 0), available: 0)
        let close = pool.apply(pool.machine.closeRequested(gracePeriod: 0))
        #expect(close == [.close(ID(value: 0))])
        #expect(pool.machine.slots == [.draining(ID(value: 0), inFlight: 0), .closed, .closed])
        #expect(pool.apply(pool.machine.widenIfNeeded()).isEmpty)
        #expect(
            pool.apply(pool.machine.connectionClosed(ID(value: 0), error: nil, hadAnswer: true, serverSpoke: true))
                == [.reportClosed])
    }
}
