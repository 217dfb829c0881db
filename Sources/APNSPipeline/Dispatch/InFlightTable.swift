/// The sends awaiting their answers, each in a slot of an array that its tag names: filing one and finding it
/// again by tag are an index, not a hash, and slots freed by answers are reused, so the table stops growing at
/// the largest number ever in flight. A tag carries its slot's generation too, so a tag the transport reports
/// twice, or one from before its slot was reused, finds nothing.
struct InFlightTable {
    private var slots: [PendingSend?] = []
    private var generations: [UInt32] = []
    /// When each slot's send went out (monotonic seconds), kept here rather than in the send (see `PendingSend`).
    private var sentTimes: [Double] = []
    private var freeSlots: [Int] = []
    private var reservedSlot: Int?

    /// The number of sends in flight.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// A tag (never 0: generations start at 1) for a send filed right after with `file(_:under:)`: the caller hands the send's notification to the
    /// transport in between, borrowed from its own value rather than copied out of the table. The transport never
    /// answers from inside `submit` (`PushTransport`), so no answer can look for the send before it is filed.
    mutating func reserveTag() -> UInt64 {
        precondition(reservedSlot == nil, "a tag was reserved and its send never filed")
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = slots.count
            slots.append(nil)
            generations.append(1)
            sentTimes.append(0)
        }
        reservedSlot = slot
        count += 1
        return UInt64(generations[slot]) << 32 | UInt64(slot)
    }

    /// Files `send` under the tag `reserveTag()` just gave, sent at `sentAt` (monotonic seconds).
    mutating func file(_ send: consuming PendingSend, under tag: UInt64, sentAt: Double) {
        let slot = Int(truncatingIfNeeded: tag & 0xFFFF_FFFF)
        precondition(slot == reservedSlot, "filed under a tag that was not reserved")
        slots[slot] = consume send
        sentTimes[slot] = sentAt
        reservedSlot = nil
    }

    /// Gives back the tag `reserveTag()` gave, if its send was never filed (its journal entry failed, so it never
    /// left): the slot is free again, and the tag names nothing.
    mutating func cancelReservation() {
        guard let slot = reservedSlot else { return }
        reservedSlot = nil
        generations[slot] &+= 1
        if generations[slot] == 0 { generations[slot] = 1 }
        freeSlots.append(slot)
        count -= 1
    }

    /// When the send filed under `tag` went out, or nil when no send is filed under it (a reserved slot's tag is
    /// not filed yet).
    func sentAt(tag: UInt64) -> Double? {
        guard let slot = slot(of: tag), slot != reservedSlot else { return nil }
        return sentTimes[slot]
    }

    /// Takes the send filed under `tag` out of the table, or nil when no send is filed under it.
    mutating func remove(tag: UInt64) -> PendingSend? {
        let named = Int(truncatingIfNeeded: tag & 0xFFFF_FFFF)
        precondition(named != reservedSlot, "a transport answered a request from inside submit")
        guard let slot = slot(of: tag), let send = slots[slot].take() else { return nil }
        generations[slot] &+= 1
        if generations[slot] == 0 { generations[slot] = 1 }
        freeSlots.append(slot)
        count -= 1
        return send
    }

    /// The slot `tag` names when the slot's generation is still the tag's, else nil: a slot's generation moves on
    /// when its send is removed, so a tag answered twice, or one from before the slot was reused, names nothing.
    private func slot(of tag: UInt64) -> Int? {
        let slot = Int(truncatingIfNeeded: tag & 0xFFFF_FFFF)
        guard slot < slots.count, generations[slot] == UInt32(truncatingIfNeeded: tag >> 32) else { return nil }
        return slot
    }
}
