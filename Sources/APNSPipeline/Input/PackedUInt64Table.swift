/// An open-addressing hash table of non-zero 64-bit entries, 8 bytes a slot, linear probing, load factor at most
/// 3/4 (so 11 to 21 bytes an entry). The bits under `keyMask` identify an entry; the bits above it are a small
/// value stored with it. The duplicate filter keeps 64-bit hashes in it; the resume state keeps
/// `(file, line)` keys with two bits of state.
struct PackedUInt64Table: Sendable {
    private var slots: [UInt64]
    private var mask: Int
    private let keyMask: UInt64
    private(set) var count = 0

    init(keyMask: UInt64 = .max, minimumCapacity: Int = 0) {
        self.keyMask = keyMask
        var capacity = 64
        while capacity * 3 / 4 < minimumCapacity { capacity *= 2 }
        slots = [UInt64](repeating: 0, count: capacity)
        mask = capacity - 1
    }

    /// Bytes held by the table.
    var memoryBytes: Int { slots.count * MemoryLayout<UInt64>.stride }

    /// The stored entry whose key bits equal those of `key`.
    func entry(forKey key: UInt64) -> UInt64? {
        let wanted = key & keyMask
        var index = slotIndex(wanted)
        while true {
            let slot = slots[index]
            if slot == 0 { return nil }
            if slot & keyMask == wanted { return slot }
            index = (index + 1) & mask
        }
    }

    /// Stores `entry` (non-zero key bits), replacing an entry with the same key; returns the one it replaced.
    @discardableResult
    mutating func store(_ entry: UInt64) -> UInt64? {
        precondition(entry & keyMask != 0, "the key bits of a table entry must not be zero")
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let wanted = entry & keyMask
        var index = slotIndex(wanted)
        while true {
            let slot = slots[index]
            if slot == 0 {
                slots[index] = entry
                count += 1
                return nil
            }
            if slot & keyMask == wanted {
                slots[index] = entry
                return slot
            }
            index = (index + 1) & mask
        }
    }

    @inline(__always)
    private func slotIndex(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: StableHash.mix(key)) & mask
    }

    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: old.count * 2)
        mask = slots.count - 1
        for entry in old where entry != 0 {
            var index = slotIndex(entry & keyMask)
            while slots[index] != 0 { index = (index + 1) & mask }
            slots[index] = entry
        }
    }
}
