/// A stream's state as kept in a reusable slot of an `HTTP2StreamSlotTable`.
protocol HTTP2SlotStream {
    /// A free slot's stream.
    init()
    /// Whether the slot is unused.
    var isFree: Bool { get }
    /// Makes the stream a free slot's again, dropping what it refers to and keeping its buffers' capacity.
    mutating func clear()
}

/// One session's open streams (client or server) in reusable slots, addressed by slot number (nghttp2 keeps each
/// stream's slot as its stream user data, so no lookup table is needed). Slots and their byte buffers are reused:
/// once the table has grown to the connection's concurrency, opening a stream allocates nothing here.
struct HTTP2StreamSlotTable<Stream: HTTP2SlotStream> {
    private(set) var streams: [Stream] = []
    private var freeSlots: [Int] = []
    /// Slots in use.
    private(set) var count = 0

    init(reservingCapacity capacity: Int = 0) {
        streams.reserveCapacity(capacity)
        freeSlots.reserveCapacity(capacity)
    }

    /// Takes a free slot (growing the table when none is free) and returns its number; the caller marks its stream
    /// in use.
    mutating func claim() -> Int {
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
        } else {
            slot = streams.count
            streams.append(Stream())
        }
        count += 1
        return slot
    }

    /// Returns a slot to the free list (`HTTP2SlotStream.clear`).
    mutating func release(_ slot: Int) {
        guard isInUse(slot) else { return }
        streams[slot].clear()
        freeSlots.append(slot)
        count -= 1
    }

    /// Whether `slot` names a stream in use.
    func isInUse(_ slot: Int) -> Bool {
        streams.indices.contains(slot) && !streams[slot].isFree
    }

    subscript(slot: Int) -> Stream {
        _read { yield streams[slot] }
        _modify { yield &streams[slot] }
    }

    /// The slots in use, in slot order.
    var slotsInUse: [Int] {
        streams.indices.filter { !streams[$0].isFree }
    }
}
