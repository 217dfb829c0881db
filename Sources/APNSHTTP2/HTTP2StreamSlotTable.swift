/// A stream's state as kept in a reusable slot of an `HTTP2StreamSlotTable`.
protocol HTTP2SlotStream {
    /// A free slot's stream.
    init()
    /// Makes the stream a free slot's again, dropping what it refers to and keeping its buffers' capacity.
    mutating func clear()
}

/// One session's open streams (client or server) in reusable slots, addressed by slot number (nghttp2 keeps each
/// stream's slot as its stream user data, so no lookup table is needed). Slots and their byte buffers are reused:
/// once the table has grown to the connection's concurrency, opening a stream allocates nothing here.
///
/// Which slots are in use is kept beside the streams, in `used`: asking a stream itself (a protocol requirement of a
/// generic element) would copy it out of the array, retains and all, on every frame.
struct HTTP2StreamSlotTable<Stream: HTTP2SlotStream> {
    private(set) var streams: [Stream] = []
    private var used: [Bool] = []
    private var freeSlots: [Int] = []
    /// Slots in use.
    private(set) var count = 0

    init(reservingCapacity capacity: Int = 0) {
        streams.reserveCapacity(capacity)
        used.reserveCapacity(capacity)
        freeSlots.reserveCapacity(capacity)
    }

    /// Takes a free slot (growing the table when none is free) and returns its number.
    mutating func claim() -> Int {
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
            used[slot] = true
        } else {
            slot = streams.count
            streams.append(Stream())
            used.append(true)
        }
        count += 1
        return slot
    }

    /// Returns a slot to the free list (`HTTP2SlotStream.clear`).
    mutating func release(_ slot: Int) {
        guard isInUse(slot) else { return }
        streams[slot].clear()
        used[slot] = false
        freeSlots.append(slot)
        count -= 1
    }

    /// Whether `slot` names a stream in use.
    func isInUse(_ slot: Int) -> Bool {
        used.indices.contains(slot) && used[slot]
    }

    subscript(slot: Int) -> Stream {
        _read { yield streams[slot] }
        _modify { yield &streams[slot] }
    }

    /// The slots in use, in slot order.
    var slotsInUse: [Int] {
        used.indices.filter { used[$0] }
    }
}
