/// The requests a connection started and has not reported yet: each tag with the serial of the provider token its
/// request carries. Every request is filed and found again once, so the table hashes a tag with one multiply
/// (Fibonacci hashing) instead of SipHash, probes linearly, and deletes by shifting the entries after a hole back
/// (no tombstones). It holds at most half its capacity, and it grows when needed, never shrinks.
struct OpenRequestTable {
    private struct Entry {
        var tag: UInt64
        var tokenSerial: Int
        var isUsed: Bool
    }

    private var entries: [Entry]
    private var shift: UInt64

    /// The number of open requests.
    private(set) var count = 0

    init() {
        entries = Array(repeating: Entry(tag: 0, tokenSerial: 0, isUsed: false), count: 16)
        shift = 64 - 4
    }

    var isEmpty: Bool { count == 0 }

    /// Files `tag` with `tokenSerial`, replacing the serial of a tag already filed.
    mutating func insert(_ tag: UInt64, tokenSerial: Int) {
        if (count + 1) * 2 > entries.count { grow() }
        var index = home(of: tag)
        let mask = entries.count - 1
        while entries[index].isUsed {
            if entries[index].tag == tag {
                entries[index].tokenSerial = tokenSerial
                return
            }
            index = (index + 1) & mask
        }
        entries[index] = Entry(tag: tag, tokenSerial: tokenSerial, isUsed: true)
        count += 1
    }

    /// The token serial filed with `tag`, or nil when it is not filed.
    func tokenSerial(of tag: UInt64) -> Int? {
        let mask = entries.count - 1
        var index = home(of: tag)
        while entries[index].isUsed {
            if entries[index].tag == tag { return entries[index].tokenSerial }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Removes `tag`; returns its token serial, or nil when it was not filed.
    mutating func remove(_ tag: UInt64) -> Int? {
        let mask = entries.count - 1
        var hole = home(of: tag)
        while entries[hole].isUsed, entries[hole].tag != tag { hole = (hole + 1) & mask }
        guard entries[hole].isUsed else { return nil }
        let serial = entries[hole].tokenSerial
        // Backward shift: an entry after the hole moves into it unless its home lies cyclically in (hole, next].
        var next = hole
        while true {
            next = (next + 1) & mask
            guard entries[next].isUsed else { break }
            let wanted = home(of: entries[next].tag)
            let staysPut = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if !staysPut {
                entries[hole] = entries[next]
                hole = next
            }
        }
        entries[hole].isUsed = false
        count -= 1
        return serial
    }

    /// Every filed tag with its serial, in tag order; empties the table.
    mutating func removeAllSorted() -> [(tag: UInt64, tokenSerial: Int)] {
        let open = entries.filter(\.isUsed).map { (tag: $0.tag, tokenSerial: $0.tokenSerial) }.sorted {
            $0.tag < $1.tag
        }
        for index in entries.indices { entries[index].isUsed = false }
        count = 0
        return open
    }

    private func home(of tag: UInt64) -> Int {
        Int(truncatingIfNeeded: (tag &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    private mutating func grow() {
        let old = entries
        entries = Array(repeating: Entry(tag: 0, tokenSerial: 0, isUsed: false), count: old.count * 2)
        shift -= 1
        count = 0
        for entry in old where entry.isUsed { insert(entry.tag, tokenSerial: entry.tokenSerial) }
    }
}
