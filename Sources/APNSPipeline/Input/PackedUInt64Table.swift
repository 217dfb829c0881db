/// An open-addressing hash table of non-zero 64-bit entries, 8 bytes a cell, linear probing, load factor at most
/// 3/4 (so 11 to 21 bytes an entry). The bits under `keyMask` identify an entry; the bits above it are a small
/// value stored with it. The resume state keeps `(file, line)` keys with two bits of state in it (the duplicate
/// filter has its own `FingerprintTable`).
struct PackedUInt64Table: Sendable {
    private var cells: [UInt64]
    private var mask: Int
    private let keyMask: UInt64
    private(set) var count = 0

    init(keyMask: UInt64 = .max, minimumCapacity: Int = 0) {
        self.keyMask = keyMask
        var capacity = 64
        while capacity * 3 / 4 < minimumCapacity { capacity *= 2 }
        cells = [UInt64](repeating: 0, count: capacity)
        mask = capacity - 1
    }

    /// Bytes held by the table.
    var memoryBytes: Int { cells.count * MemoryLayout<UInt64>.stride }

    /// The stored entry whose key bits equal those of `key`.
    func entry(forKey key: UInt64) -> UInt64? {
        let wanted = key & keyMask
        var index = cellIndex(wanted)
        while true {
            let cell = cells[index]
            if cell == 0 { return nil }
            if cell & keyMask == wanted { return cell }
            index = (index + 1) & mask
        }
    }

    /// Stores `entry` (non-zero key bits), replacing an entry with the same key; returns the one it replaced.
    @discardableResult
    mutating func store(_ entry: UInt64) -> UInt64? {
        precondition(entry & keyMask != 0, "the key bits of a table entry must not be zero")
        if (count + 1) * 4 > cells.count * 3 { grow() }
        let wanted = entry & keyMask
        var index = cellIndex(wanted)
        while true {
            let cell = cells[index]
            if cell == 0 {
                cells[index] = entry
                count += 1
                return nil
            }
            if cell & keyMask == wanted {
                cells[index] = entry
                return cell
            }
            index = (index + 1) & mask
        }
    }

    @inline(__always)
    private func cellIndex(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: StableHash.mix(key)) & mask
    }

    private mutating func grow() {
        let old = cells
        cells = [UInt64](repeating: 0, count: old.count * 2)
        mask = cells.count - 1
        for entry in old where entry != 0 {
            var index = cellIndex(entry & keyMask)
            while cells[index] != 0 { index = (index + 1) & mask }
            cells[index] = entry
        }
    }
}
