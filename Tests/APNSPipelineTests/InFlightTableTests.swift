import APNSCore
import Testing

@testable import APNSPipeline

/// `InFlightTable`: tags find their sends once, slots are reused, stale and unknown tags find nothing.
@Suite("In-flight table")
struct InFlightTableTests {
    private func send(line: Int) throws -> PendingSend {
        guard case .notification(let notification) = Fixture.record(line, token: Fixture.token(line)).content else {
            throw TableTestError.fixture
        }
        return PendingSend(key: RecordKey(fileIndex: 0, line: line), notification: notification)
    }

    @Test("each tag gives back its own send, once")
    func tagsFindTheirSends() throws {
        var table = InFlightTable()
        var tags: [Int: UInt64] = [:]
        for line in 1...50 { tags[line] = table.filed(try send(line: line)) }
        #expect(table.count == 50)
        #expect(Set(tags.values).count == 50, "two sends share a tag")
        #expect(!tags.values.contains(0), "tag 0 handed out")
        for line in stride(from: 50, through: 1, by: -3) {
            let tag = try #require(tags[line])
            #expect(table.sentAt(tag: tag) == Double(line), "a send's time is another's")
            #expect(table.remove(tag: tag)?.key.line == line)
            #expect(table.remove(tag: tag)?.key == nil, "a tag answered twice found a send")
        }
        #expect(table.count == 50 - 17)
        for line in 1...50 where (50 - line) % 3 != 0 {
            let tag = try #require(tags[line])
            #expect(table.remove(tag: tag)?.key.line == line)
        }
        #expect(table.isEmpty)
    }

    @Test("a reused slot does not answer to the tag of its earlier send")
    func staleTagsFindNothing() throws {
        var table = InFlightTable()
        let first = table.filed(try send(line: 1))
        #expect(table.remove(tag: first)?.key.line == 1)
        let second = table.filed(try send(line: 2))
        #expect(second & 0xFFFF_FFFF == first & 0xFFFF_FFFF, "the freed slot was not reused")
        #expect(second != first)
        #expect(table.remove(tag: first)?.key == nil, "the stale tag found the slot's new send")
        #expect(table.count == 1)
        #expect(table.remove(tag: 0xFFFF_FFFF_FFFF)?.key == nil)
        #expect(table.remove(tag: second)?.key.line == 2)
    }

    @Test("a reserved tag counts as in flight and finds its send once filed")
    func reserveThenFile() throws {
        var table = InFlightTable()
        let before = table.filed(try send(line: 1))
        let tag = table.reserveTag()
        #expect(table.count == 2 && tag != before)
        #expect(table.sentAt(tag: tag) == nil, "a reserved tag's send has not gone out")
        table.file(try send(line: 2), under: tag, sentAt: 12.5)
        #expect(table.sentAt(tag: tag) == 12.5)
        #expect(table.remove(tag: tag)?.key.line == 2)
        #expect(table.sentAt(tag: tag) == nil, "a removed send still has a send time")
        #expect(table.remove(tag: before)?.key.line == 1)
        #expect(table.isEmpty)
        let again = table.reserveTag()
        #expect(again & 0xFFFF_FFFF < 2, "a freed slot was not reused for the reservation")
        table.file(try send(line: 3), under: again, sentAt: 20)
        #expect(table.remove(tag: tag)?.key == nil, "the slot's earlier tag found its new send")
        #expect(table.sentAt(tag: tag) == nil, "the slot's earlier tag found its new send's time")
        #expect(table.sentAt(tag: again) == 20)
        #expect(table.remove(tag: again)?.key.line == 3)
    }

    @Test("a reservation given back: nothing in flight, its tag names nothing, its slot is reused")
    func cancelReservation() throws {
        var table = InFlightTable()
        let tag = table.reserveTag()
        table.cancelReservation()
        #expect(table.isEmpty, "a send that never left counts as in flight")
        #expect(table.remove(tag: tag)?.key == nil)
        table.cancelReservation()  // none reserved: nothing
        #expect(table.isEmpty)
        let again = table.filed(try send(line: 1))
        #expect(again & 0xFFFF_FFFF == tag & 0xFFFF_FFFF && again != tag, "the slot was not reused under a new tag")
        #expect(table.remove(tag: again)?.key.line == 1)
    }

    @Test("slots are reused: the table grows to the most ever in flight, no further")
    func slotsAreReused() throws {
        var table = InFlightTable()
        var live: [UInt64] = []
        for line in 1...1000 {
            live.append(table.filed(try send(line: line)))
            if live.count > 8 { #expect(table.remove(tag: live.removeFirst())?.key != nil) }
        }
        let slots = Set(live.map { $0 & 0xFFFF_FFFF })
        #expect(slots.allSatisfy { $0 < 9 }, "slots beyond the 9 ever in flight: \(slots.sorted())")
    }
}

private enum TableTestError: Error { case fixture }

extension InFlightTable {
    /// Reserves a tag and files `send` under it, as the dispatcher does around a submit.
    fileprivate mutating func filed(_ send: PendingSend) -> UInt64 {
        let tag = reserveTag()
        file(send, under: tag, sentAt: Double(send.key.line))
        return tag
    }
}
